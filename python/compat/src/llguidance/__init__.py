"""`llguidance` over llg_rs: LLGuidance's import name, this repository's engine.

Not the real llguidance package: every name comes from ``llg_rs``, so code that does
``import llguidance`` (vLLM, SGLang, mistral-common) runs on the llg-rs engine. Plain
modules, no import hooks: spawned worker processes import it like any package.
"""

from llg_rs import *  # noqa: F401,F403
from llg_rs import __all__ as _llg_rs_all
from llg_rs import __version__ as __llg_rs_version__
from llg_rs import (  # noqa: F401  (the names llguidance's __init__ exports)
    GrammarFormat,
    JsonCompiler,
    LarkCompiler,
    LLExecutor,
    LLMatcher,
    LLParserLimits,
    LLTokenizer,
    RegexCompiler,
    StructTag,
    TokenizerWrapper,
    get_version,
    grammar_from,
    regex_to_lark,
)

from ._version import __version__

#: Which engine answers ``import llguidance`` (the real wheel has no such attribute).
__engine__ = "llg_rs"

__all__ = [n for n in _llg_rs_all if n != "__version__"] + ["__version__"]
