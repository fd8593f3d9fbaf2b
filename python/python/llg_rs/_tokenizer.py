from typing import Any, List, Optional, Sequence

from ._util import TokenId


class TokenizerWrapper:
    """Adapts a tokenizer object for ``LLTokenizer``.

    The wrapped object needs ``eos_token_id``, ``bos_token_id``, ``tokens`` (the bytes of
    every token id) and, optionally, ``special_token_ids``; calling it on text returns token
    ids. ``LLTokenizer(TokenizerWrapper(t))`` builds the vocabulary from ``tokens`` and
    tokenizes text through the object.
    """

    eos_token_id: TokenId
    bos_token_id: Optional[TokenId]
    tokens: Sequence[bytes]
    special_token_ids: Sequence[int]

    def __init__(self, gtokenizer: Any) -> None:
        self.eos_token_id = gtokenizer.eos_token_id
        self.bos_token_id = getattr(gtokenizer, "bos_token_id", None)
        self.tokens = gtokenizer.tokens
        self.special_token_ids = list(getattr(gtokenizer, "special_token_ids", []) or [])
        self.is_tokenizer_wrapper = True
        self._inner = gtokenizer
        # Some tokenizers take bytes, others str: find out once.
        try:
            gtokenizer(b"test")
            self._takes_bytes = True
        except Exception:
            self._takes_bytes = False

    def __call__(self, s: str) -> List[TokenId]:
        if self._takes_bytes:
            return list(self._inner(s.encode("utf-8")))
        return list(self._inner(s))
