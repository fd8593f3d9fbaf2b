"""llg_rs: constrained decoding for LLMs with LLGuidance's Python API.

Code written for LLGuidance runs on this engine after ``import llg_rs as llguidance``
(and ``llg_rs.torch``, ``llg_rs.numpy``, ``llg_rs.hf`` for the submodules).
"""

from ._lib import (
    CancellationHandle,
    JsonCompiler,
    LarkCompiler,
    LLExecutor,
    LLMatcher,
    LLParserLimits,
    LLTokenizer,
    RegexCompiler,
    get_version,
    regex_to_lark,
)
from ._grammar_from import GrammarFormat, grammar_from
from ._struct_tag import StructTag
from ._tokenizer import TokenizerWrapper
from ._util import StopReason, TokenId

try:
    from importlib.metadata import version as _version

    __version__ = _version("llg-rs")
except Exception:  # pragma: no cover - running from a source tree without metadata
    __version__ = "0.0.0"

__all__ = [
    "LLTokenizer",
    "LLMatcher",
    "CancellationHandle",
    "LLExecutor",
    "LLParserLimits",
    "JsonCompiler",
    "LarkCompiler",
    "RegexCompiler",
    "TokenizerWrapper",
    "grammar_from",
    "GrammarFormat",
    "StructTag",
    "StopReason",
    "TokenId",
    "regex_to_lark",
    "get_version",
    "__version__",
]
