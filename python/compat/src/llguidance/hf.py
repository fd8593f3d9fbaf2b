"""`llguidance.hf` over llg_rs: re-exports `llg_rs.hf`."""

from llg_rs.hf import *  # noqa: F401,F403
from llg_rs.hf import (  # noqa: F401  (the names llguidance.hf has)
    from_tokenizer,
)
