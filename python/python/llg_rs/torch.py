"""Token bitmasks as torch int32 tensors (CPU for filling; applying works on any device)."""

from typing import List, Tuple

import torch

from ._lib import LLExecutor, LLMatcher


def get_bitmask_shape(batch_size: int, vocab_size: int) -> Tuple[int, int]:
    return (batch_size, (vocab_size + 31) // 32)


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> torch.Tensor:
    """A bitmask of ``batch_size`` rows, every token allowed (pinned when CUDA is there)."""
    shape = get_bitmask_shape(batch_size, vocab_size)
    pin = torch.cuda.is_available()
    try:
        return torch.full(shape, -1, dtype=torch.int32, pin_memory=pin)
    except RuntimeError:
        return torch.full(shape, -1, dtype=torch.int32)


def _check(bitmask: torch.Tensor) -> None:
    assert bitmask.dtype == torch.int32, "Mask must be int32"
    assert bitmask.is_cpu, "Mask must be on CPU"
    assert bitmask.dim() == 2, "Mask must be 2D"


def fill_next_token_bitmask(matcher: LLMatcher, bitmask: torch.Tensor, index: int = 0) -> None:
    """Computes the matcher's mask into row ``index``."""
    _check(bitmask)
    rows, words = bitmask.shape
    if index < 0:
        index += rows
    if not 0 <= index < rows:
        raise IndexError(f"row {index} out of range for a bitmask of {rows} rows")
    assert bitmask.stride(1) == 1, "Mask must be contiguous"
    # The row's address without a tensor view (a view cost ~3 us of a ~10 us Python path
    # per mask in vLLM's backend).
    ptr = bitmask.data_ptr() + index * bitmask.stride(0) * 4
    matcher.unsafe_compute_mask_ptr(ptr, words * 4)


def fill_next_token_bitmask_par(
    executor: LLExecutor, matchers: List[Tuple[LLMatcher, int]], bitmask: torch.Tensor
) -> None:
    """Computes each ``(matcher, row)`` mask, in parallel."""
    _check(bitmask)
    assert bitmask.is_contiguous(), "Mask must be contiguous"
    batch, words = bitmask.shape
    executor.unsafe_compute_mask_ptr(matchers, bitmask.data_ptr(), words * 4, batch)


def fill_next_token_bitmask_par_with_draft_tokens(
    executor: LLExecutor,
    matchers: List[Tuple[LLMatcher, int, List[int]]],
    bitmask: torch.Tensor,
) -> None:
    """Masks now (row K) and after each draft token (rows K+1, ...), in parallel."""
    _check(bitmask)
    assert bitmask.is_contiguous(), "Mask must be contiguous"
    batch, words = bitmask.shape
    executor.unsafe_compute_mask_ptr_with_draft_token(matchers, bitmask.data_ptr(), words * 4, batch)


def consume_token_par(executor: LLExecutor, matchers: List[Tuple[LLMatcher, int]]) -> List[bool]:
    """Consumes one token per matcher, in parallel; which succeeded."""
    return executor.consume_token_par(matchers)


def apply_token_bitmask_inplace(logits: torch.Tensor, mask: torch.Tensor) -> None:
    """Sets the logits of disallowed tokens to -inf (and of ids past the mask); ``mask`` is
    moved to the logits' device."""
    if logits.dim() == 1:
        logits = logits.unsqueeze(0)
    if mask.dim() == 1:
        mask = mask.unsqueeze(0)
    assert mask.dtype == torch.int32, "Mask must be int32"
    assert logits.dim() == 2, "Logits must be 2D"
    assert logits.shape[0] == mask.shape[0], "Batch size mismatch"
    mask = mask.to(logits.device, non_blocking=True)
    vocab = logits.shape[1]
    covered = min(vocab, 32 * mask.shape[1])
    if vocab > covered:
        logits[:, covered:] = float("-inf")
    shifts = torch.arange(32, device=logits.device, dtype=torch.int32)
    bits = ((mask.unsqueeze(-1) >> shifts) & 1).reshape(mask.shape[0], -1)[:, :covered]
    logits[:, :covered].masked_fill_(bits == 0, float("-inf"))
