"""Type stubs of llg_rs._lib: LLGuidance's Python API over the llg-rs engine."""

from typing import Any, Dict, List, Optional, Tuple, TypedDict, Union

from ._tokenizer import TokenizerWrapper
from ._util import StopReason, TokenId

class LLTokenizer:
    """A vocabulary, its canonical tokenizer and the mask slices.

    ``tokenizer``: ``"byte"`` (LLGuidance's byte tokenizer), ``"bytes"``, ``"o200k"``,
    ``"cl100k"``, a path to a tokenizer file (``tokenizer.json``, ``*.tiktoken``, tekken,
    SentencePiece ``.model``), ``tokenizer.json`` text, or a ``TokenizerWrapper``.
    ``n_vocab`` pads the vocabulary to the model's logits width; ``eos_token`` sets the EOS
    id(s); ``slices``: ``None`` for the defaults, ``[]`` for none.
    """

    vocab_size: int
    eos_token: TokenId
    eos_tokens: List[TokenId]
    is_canonical: bool
    slices: Optional[List[str]]

    def __new__(
        cls,
        tokenizer: Union[str, TokenizerWrapper],
        n_vocab: Optional[int] = None,
        eos_token: Optional[Union[TokenId, List[TokenId]]] = None,
        slices: Optional[List[str]] = None,
    ) -> "LLTokenizer": ...
    @staticmethod
    def from_tiktoken(
        encoder: Dict[bytes, int],
        special_tokens: Dict[str, int],
        pattern: str,
        eos_token: Optional[Union[TokenId, List[TokenId]]] = None,
        n_vocab: Optional[int] = None,
        slices: Optional[List[str]] = None,
    ) -> "LLTokenizer": ...
    def with_slices(self, slices: List[str]) -> "LLTokenizer": ...
    @staticmethod
    def general_slices() -> List[str]: ...
    @staticmethod
    def json_slices() -> List[str]: ...
    def greedy_tokenize(self, text: str) -> List[int]: ...
    def tokenize_bytes(self, utf8bytes: bytes, *, parse_special: bool = False) -> List[int]: ...
    def tokenize_str(self, text: str, *, parse_special: bool = False) -> List[int]: ...
    def tokenize_partial(
        self, new_bytes: bytes, recent_tokens: Optional[List[int]] = None
    ) -> Tuple[List[int], bytes]: ...
    def decode_str(self, tokens: List[int]) -> str: ...
    def decode_bytes(self, tokens: List[int]) -> bytes: ...
    def is_special_token(self, token: int) -> bool: ...
    def dbg_tokens(self, tokens: List[int]) -> str: ...
    def test_trace_tokens(self, tokens: List[int]) -> str: ...

class LLParserLimits:
    """Resource limits (LLGuidance's names and defaults)."""

    def __init__(
        self,
        *,
        max_items_in_row: Optional[int] = None,
        initial_lexer_fuel: Optional[int] = None,
        step_lexer_fuel: Optional[int] = None,
        step_max_items: Optional[int] = None,
        max_lexer_states: Optional[int] = None,
        max_grammar_size: Optional[int] = None,
        precompute_large_lexemes: Optional[bool] = None,
        verbose_errors: Optional[bool] = None,
    ) -> None: ...
    @property
    def max_items_in_row(self) -> int: ...
    @property
    def initial_lexer_fuel(self) -> int: ...
    @property
    def step_lexer_fuel(self) -> int: ...
    @property
    def step_max_items(self) -> int: ...
    @property
    def max_lexer_states(self) -> int: ...
    @property
    def max_grammar_size(self) -> int: ...
    @property
    def precompute_large_lexemes(self) -> bool: ...
    @property
    def verbose_errors(self) -> bool: ...

class JsonCompileOptions(TypedDict, total=False):
    item_separator: Optional[str]
    key_separator: Optional[str]
    whitespace_pattern: Optional[str]
    whitespace_flexible: Optional[bool]
    coerce_one_of: Optional[bool]
    lenient: Optional[bool]
    # llg_rs addition: an unknown `format` is an error (default: an annotation, with a
    # warning naming it).
    strict_formats: Optional[bool]
    json_allowed_escapes: Optional[str]
    json_allow_general_unicode_escapes: Optional[bool]
    any_order: Optional[bool]

class CancellationHandle:
    """A permanent cancellation request for a matcher and its compile (LLGuidance 1.9's
    contract). ``cancel()`` from any thread: a compile given it stops with an error, the
    matcher's calls stop (a mask under way within a few steps; never an EOS-only or partial
    mask: the bitmask is all zeros) and it stays stopped (``stop_reason()`` is
    ``"Cancelled"``; ``reset``/``rollback`` do not revive it)."""

    def __new__(cls) -> "CancellationHandle": ...
    def cancel(self) -> None: ...
    def is_cancelled(self) -> bool: ...

class LLMatcher:
    """One sequence's grammar state. Never raises for grammar errors, limits or rejected
    tokens: the matcher enters its error state (``is_error()``, ``get_error()``), where
    masks allow EOS only. Raises on API misuse (bad pointer, wrong buffer size)."""

    vocab_size: int
    last_mask_ns: int
    # llg_rs addition (write-only): True gives pure masks (every grammar-consistent token);
    # the default, False, gives LLGuidance's served masks (the first forced token only where
    # the grammar forces bytes).
    pure_masks: bool

    def __new__(
        cls,
        tokenizer: LLTokenizer,
        grammar: str,
        *,
        log_level: int = 1,
        limits: Optional[LLParserLimits] = None,
        # llg_rs additions: a handle that stops the compile (and later the matcher), and a
        # compile deadline in milliseconds (past it: the error state, "compile deadline of
        # N ms exceeded").
        cancellation: Optional[CancellationHandle] = None,
        compile_deadline_ms: Optional[int] = None,
        # llg_rs addition: the request's stop set (special token ids) in place of the
        # tokenizer's EOS ids (XGrammar's override_stop_tokens, vLLM's stop_token_ids): each
        # is masked until the grammar accepts, allowed once it does, and ends the matcher.
        stop_tokens: Optional[List[int]] = None,
    ) -> "LLMatcher": ...
    def cancellation_handle(self) -> CancellationHandle:
        """The matcher's handle (enables cancellation; LLGuidance's ``into_cancellable``)."""
    def is_cancelled(self) -> bool: ...
    @staticmethod
    def validate_grammar(
        grammar: str,
        tokenizer: Optional[LLTokenizer] = None,
        *,
        limits: Optional[LLParserLimits] = None,
    ) -> str: ...
    @staticmethod
    def validate_grammar_with_warnings(
        grammar: str,
        tokenizer: Optional[LLTokenizer] = None,
        *,
        limits: Optional[LLParserLimits] = None,
    ) -> Tuple[bool, List[str]]: ...
    @staticmethod
    def grammar_from_json_schema(
        schema: Union[str, Dict[str, Any]],
        defaults: Optional[JsonCompileOptions] = None,
        overrides: Optional[JsonCompileOptions] = None,
    ) -> str: ...
    @staticmethod
    def grammar_from_lark(lark: str) -> str: ...
    @staticmethod
    def grammar_from_regex(regex: str) -> str: ...
    def is_error(self) -> bool: ...
    def get_error(self) -> str: ...
    def get_grammar_warnings(self) -> List[str]: ...
    def deep_copy(self) -> "LLMatcher": ...
    def is_accepting(self) -> bool: ...
    def is_stopped(self) -> bool: ...
    def stop_reason(self) -> StopReason: ...
    def rollback(self, num_tokens: int) -> bool: ...
    def reset(self) -> bool: ...
    def compute_ff_tokens(self) -> List[TokenId]: ...
    def compute_ff_bytes(self) -> bytes: ...
    def try_consume_tokens(self, tokens: List[TokenId]) -> int: ...
    def consume_token(self, sampled_token: TokenId) -> bool: ...
    def consume_tokens(self, sampled_tokens: List[TokenId]) -> bool: ...
    def validate_tokens(self, tokens: List[TokenId]) -> int: ...
    def compute_bitmask(self) -> bytes: ...
    def compute_logit_bias(self) -> bytes: ...
    def unsafe_compute_mask_ptr(self, trg_ptr: int, trg_bytes: int) -> None: ...
    def unsafe_compute_mask_ptr_with_draft_token(
        self, trg_ptr: int, one_mask_bytes: int, trg_batch_size: int, draft_tokens: List[TokenId]
    ) -> None: ...
    def get_capture(self, name: str) -> Optional[bytes]: ...
    def get_captures(self) -> List[Tuple[str, bytes]]: ...

class LLExecutor:
    """A thread pool filling masks of many matchers at once (the GIL released)."""

    num_threads: int

    def __new__(cls, num_threads: Optional[int] = None) -> "LLExecutor": ...
    def unsafe_compute_mask_ptr(
        self,
        interpreters: List[Tuple[LLMatcher, int]],
        trg_pointer: int,
        one_mask_bytes: int,
        trg_batch_size: int,
    ) -> None: ...
    def unsafe_compute_mask_ptr_with_draft_token(
        self,
        interpreters: List[Tuple[LLMatcher, int, List[int]]],
        trg_pointer: int,
        one_mask_bytes: int,
        trg_batch_size: int,
    ) -> None: ...
    def consume_token_par(self, matchers: List[Tuple[LLMatcher, TokenId]]) -> List[bool]: ...

class JsonCompiler:
    """Deprecated (as in LLGuidance): use LLMatcher.grammar_from_json_schema."""

    def __new__(
        cls,
        separators: Optional[Tuple[str, str]] = None,
        whitespace_flexible: bool = False,
        coerce_one_of: bool = False,
        whitespace_pattern: Optional[str] = None,
        json_allowed_escapes: Optional[str] = None,
        json_allow_general_unicode_escapes: bool = False,
    ) -> "JsonCompiler": ...
    def compile(self, schema: str, check: bool = True) -> str: ...

class LarkCompiler:
    """Deprecated (as in LLGuidance): use LLMatcher.grammar_from_lark."""

    def __new__(cls) -> "LarkCompiler": ...
    def compile(self, lark: str, check: bool = True) -> str: ...

class RegexCompiler:
    """Deprecated (as in LLGuidance): use LLMatcher.grammar_from_regex."""

    def __new__(cls) -> "RegexCompiler": ...
    def compile(self, regex: str, check: bool = True) -> str: ...

def regex_to_lark(regex: str, use_ascii: str = "") -> str: ...
def get_version() -> str: ...
