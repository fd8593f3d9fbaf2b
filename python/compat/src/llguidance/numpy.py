"""`llguidance.numpy` over llg_rs: re-exports `llg_rs.numpy`."""

from llg_rs.numpy import *  # noqa: F401,F403
from llg_rs.numpy import (  # noqa: F401  (the names llguidance.numpy has)
    get_bitmask_shape,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    fill_next_token_bitmask,
    fill_next_token_bitmask_par,
    fill_next_token_bitmask_par_with_draft_tokens,
    consume_token_par,
)
