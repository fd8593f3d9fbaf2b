"""`llguidance._util` over llg_rs: re-exports `llg_rs._util`."""

from llg_rs._util import *  # noqa: F401,F403
from llg_rs._util import (  # noqa: F401  (the names llguidance._util has)
    StopReason,
    TokenId,
)
