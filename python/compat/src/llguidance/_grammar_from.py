"""`llguidance._grammar_from` over llg_rs: re-exports `llg_rs._grammar_from`."""

from llg_rs._grammar_from import *  # noqa: F401,F403
from llg_rs._grammar_from import (  # noqa: F401  (the names llguidance._grammar_from has)
    GrammarFormat,
    grammar_from,
)
