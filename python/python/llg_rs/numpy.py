"""Token bitmasks as numpy int32 arrays: one row per sequence, bit ``t % 32`` of word
``t // 32`` set when token ``t`` is allowed."""

from typing import List, Tuple

import numpy as np
from numpy.typing import NDArray

from ._lib import LLExecutor, LLMatcher


def get_bitmask_shape(batch_size: int, vocab_size: int) -> Tuple[int, int]:
    return (batch_size, (vocab_size + 31) // 32)


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> NDArray[np.int32]:
    """A bitmask of ``batch_size`` rows, every token allowed."""
    return np.full(get_bitmask_shape(batch_size, vocab_size), -1, dtype=np.int32)


def _check(bitmask: NDArray[np.int32]) -> None:
    assert bitmask.dtype == np.int32, "Mask must be int32"
    assert bitmask.ndim == 2, "Mask must be 2D"


# The last bitmask filled, described once: (array, shape, data address, row stride, rows,
# row bytes). Servers fill rows of the same array step after step; numpy's `.ctypes.data`
# costs ~3 us, so it is read once per array. The array is held, so its memory cannot be
# freed or reallocated (`ndarray.resize` refuses while it is referenced) under the cache.
_last = None


def _describe(bitmask: NDArray[np.int32]):
    _check(bitmask)
    assert bitmask.strides[1] == 4 or bitmask.shape[1] <= 1, "Mask must be contiguous"
    assert bitmask.flags.writeable, "Mask must be writable"
    d = (bitmask, bitmask.shape, bitmask.ctypes.data, bitmask.strides[0], bitmask.shape[0], bitmask.shape[1] * 4)
    global _last
    _last = d
    return d


def fill_next_token_bitmask(matcher: LLMatcher, bitmask: NDArray[np.int32], index: int = 0) -> None:
    """Computes the matcher's mask into row ``index``."""
    d = _last
    if d is None or d[0] is not bitmask or d[1] != bitmask.shape:
        d = _describe(bitmask)
    rows = d[4]
    if index < 0:
        index += rows
    if not 0 <= index < rows:
        raise IndexError(f"index {index} is out of bounds for axis 0 with size {rows}")
    matcher.unsafe_compute_mask_ptr(d[2] + index * d[3], d[5])


def fill_next_token_bitmask_par(
    executor: LLExecutor, matchers: List[Tuple[LLMatcher, int]], bitmask: NDArray[np.int32]
) -> None:
    """Computes each ``(matcher, row)`` mask, in parallel."""
    _check(bitmask)
    assert bitmask.flags["C_CONTIGUOUS"], "Mask must be contiguous"
    batch, words = bitmask.shape
    executor.unsafe_compute_mask_ptr(matchers, bitmask.ctypes.data, words * 4, batch)


def fill_next_token_bitmask_par_with_draft_tokens(
    executor: LLExecutor,
    matchers: List[Tuple[LLMatcher, int, List[int]]],
    bitmask: NDArray[np.int32],
) -> None:
    """Masks now (row K) and after each draft token (rows K+1, ...), in parallel."""
    _check(bitmask)
    assert bitmask.flags["C_CONTIGUOUS"], "Mask must be contiguous"
    batch, words = bitmask.shape
    executor.unsafe_compute_mask_ptr_with_draft_token(matchers, bitmask.ctypes.data, words * 4, batch)


def consume_token_par(executor: LLExecutor, matchers: List[Tuple[LLMatcher, int]]) -> List[bool]:
    """Consumes one token per matcher, in parallel; which succeeded."""
    return executor.consume_token_par(matchers)


def apply_token_bitmask_inplace(logits: NDArray[np.float32], mask: NDArray[np.int32]) -> None:
    """Sets the logits of disallowed tokens to -inf (and of ids past the mask)."""
    if logits.ndim == 1:
        logits = logits[None, :]
    if mask.ndim == 1:
        mask = mask[None, :]
    assert mask.dtype == np.int32, "Mask must be int32"
    assert logits.ndim == 2, "Logits must be 2D"
    assert logits.shape[0] == mask.shape[0], "Batch size mismatch"
    vocab = logits.shape[1]
    covered = min(vocab, 32 * mask.shape[1])
    if vocab > covered:
        logits[:, covered:] = -np.inf
    bits = np.unpackbits(np.ascontiguousarray(mask).view(np.uint8), axis=1, bitorder="little")[:, :covered]
    logits[:, :covered][bits == 0] = -np.inf
