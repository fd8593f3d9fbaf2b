"""`llguidance._tokenizer` over llg_rs: re-exports `llg_rs._tokenizer`."""

from llg_rs._tokenizer import *  # noqa: F401,F403
from llg_rs._tokenizer import (  # noqa: F401  (the names llguidance._tokenizer has)
    TokenizerWrapper,
)
