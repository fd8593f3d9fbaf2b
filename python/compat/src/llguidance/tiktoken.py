"""`llguidance.tiktoken` over llg_rs: re-exports `llg_rs.tiktoken`."""

from llg_rs.tiktoken import *  # noqa: F401,F403
from llg_rs.tiktoken import (  # noqa: F401  (the names llguidance.tiktoken has)
    lltokenizer_from_encoding,
)
