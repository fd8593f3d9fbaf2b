"""``LLTokenizer`` from a ``tiktoken.Encoding``."""

from typing import TYPE_CHECKING, List, Optional, Union

from ._lib import LLTokenizer

if TYPE_CHECKING:
    import tiktoken


def lltokenizer_from_encoding(
    encoding: "tiktoken.Encoding",
    *,
    n_vocab: Optional[int] = None,
    eos_token: Optional[Union[int, List[int]]] = None,
    slices: Optional[List[str]] = None,
) -> LLTokenizer:
    """An ``LLTokenizer`` with the encoding's ranks, special tokens and pre-tokenizer
    pattern; EOS defaults to the encoding's end-of-text token. Takes about a second for a
    200k vocabulary: cache the result."""
    return LLTokenizer.from_tiktoken(
        encoding._mergeable_ranks,
        encoding._special_tokens,
        encoding._pat_str,
        eos_token=encoding.eot_token if eos_token is None else eos_token,
        n_vocab=n_vocab,
        slices=slices,
    )
