"""transformers integration: ``from_tokenizer`` for fast tokenizers and a
``LogitsProcessor`` that constrains ``model.generate``."""

from copy import copy
from typing import List, Optional, Sequence, Union

import transformers

from ._lib import LLMatcher, LLTokenizer


def from_tokenizer(
    hf_tokenizer: "transformers.PreTrainedTokenizerFast",
    n_vocab: Optional[int] = None,
    eos_token: Optional[Union[int, List[int]]] = None,
    slices: Optional[List[str]] = None,
) -> LLTokenizer:
    """An ``LLTokenizer`` for a transformers fast tokenizer (byte-level BPE or
    SentencePiece-style), through its ``tokenizer.json`` (added tokens included).

    ``n_vocab``: the model's logits width when larger than the tokenizer's; ``eos_token``:
    the EOS id(s) (default: the tokenizer's). Building takes up to a second: cache it.
    """
    if not isinstance(hf_tokenizer, transformers.PreTrainedTokenizerFast):
        raise ValueError("Only fast tokenizers are supported")
    backend = copy(hf_tokenizer.backend_tokenizer)
    backend.no_padding()
    backend.no_truncation()
    if eos_token is None:
        eos_token = hf_tokenizer.eos_token_id
    return LLTokenizer(backend.to_str(), n_vocab=n_vocab, eos_token=eos_token, slices=slices)


class LogitsProcessor(transformers.LogitsProcessor):
    """Constrains generation to a grammar: before each step, tokens the matcher does not
    allow get -inf. One matcher per sequence of the batch (a single matcher for batch 1).

    The tokens generated since the last call are consumed first, so the processor follows
    ``model.generate`` (greedy or sampled). After the sequence ends (EOS, or a matcher that
    stopped), only EOS is allowed.

    A processor follows one ``generate`` call: for another, call ``reset()`` (which also
    resets the matchers) or make a new processor with fresh matchers.
    """

    def __init__(self, matcher: Union[LLMatcher, Sequence[LLMatcher]]):
        self.matchers: List[LLMatcher] = [matcher] if isinstance(matcher, LLMatcher) else list(matcher)
        self._prompt_len: Optional[int] = None
        self._seen = 0

    def reset(self) -> None:
        """Readies the processor for another ``generate`` call: resets each matcher to the
        start of its grammar and forgets the previous prompt."""
        for m in self.matchers:
            m.reset()
        self._prompt_len = None
        self._seen = 0

    def __call__(self, input_ids, scores):
        import torch

        from .torch import apply_token_bitmask_inplace, fill_next_token_bitmask

        batch = input_ids.shape[0]
        if batch != len(self.matchers):
            raise ValueError(f"{len(self.matchers)} matchers for a batch of {batch}")
        if self._prompt_len is not None and input_ids.shape[1] < self._seen:
            # Sequences only grow within one generate() call: this is a new one.
            raise ValueError(
                "LogitsProcessor reused for a new generation: call reset() first (or make a new one)"
            )
        if self._prompt_len is None:
            self._prompt_len = input_ids.shape[1]
            self._seen = self._prompt_len
        new = input_ids[:, self._seen:].tolist()
        self._seen = input_ids.shape[1]
        mask = torch.zeros((batch, (self.matchers[0].vocab_size + 31) // 32), dtype=torch.int32)
        for i, m in enumerate(self.matchers):
            for t in new[i]:
                # A finished sequence is padded by generate(); its matcher allows EOS only.
                if not m.is_stopped():
                    m.consume_token(t)
            fill_next_token_bitmask(m, mask, i)
        apply_token_bitmask_inplace(scores, mask)
        return scores
