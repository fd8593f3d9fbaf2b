import numpy as np
import pytest

import llg_rs
import llg_rs.numpy as lnp
from llg_rs import LLExecutor, LLMatcher

from conftest import bits, row_bits

AB = 'start: "ab" | "ac"'


@pytest.fixture(scope="module")
def ex():
    return LLExecutor(num_threads=2)


def test_pointer_api(byte_tok):
    m = LLMatcher(byte_tok, AB)
    big = np.zeros(64, np.int32)
    p = big.ctypes.data
    m.unsafe_compute_mask_ptr(p, 36)
    assert row_bits(big[:9]) == [97]
    for ptr, size, exc, msg in [
        (p, 32, ValueError, "Invalid buffer size"),
        (p, 40, ValueError, "Invalid buffer size"),
        (p, 0, ValueError, "Invalid buffer size"),
        (0, 36, ValueError, "Null pointer"),
        (p + 1, 36, ValueError, "Pointer not aligned"),
        (p, -1, OverflowError, "negative"),
    ]:
        with pytest.raises(exc, match=msg):
            m.unsafe_compute_mask_ptr(ptr, size)
    m.unsafe_compute_mask_ptr(p + 4, 36)
    merr = LLMatcher(byte_tok, "start: foo")
    a = np.zeros(9, np.int32)
    merr.unsafe_compute_mask_ptr(a.ctypes.data, 36)
    assert row_bits(a) == [261]


def test_executor_errors(byte_tok, ex):
    m = LLMatcher(byte_tok, AB)
    a = np.zeros((4, 9), np.int32)
    pa = a.ctypes.data
    cases = [
        (([], pa, 36, 1), ValueError, "No interpreters"),
        (([m], pa, 36, 1), TypeError, "tuple"),
        (([(m,)], pa, 36, 1), ValueError, r"Expecting \(LLMatcher, int\) tuple"),
        (([(m, 0, 1)], pa, 36, 1), ValueError, r"Expecting \(LLMatcher, int\) tuple"),
        (([(0, m)], pa, 36, 1), TypeError, "LLMatcher"),
        (([(m, 0), (m, 1)], pa, 36, 2), RuntimeError, "Already borrowed"),
        (((m, 0), pa, 36, 1), TypeError, "list"),
        (([(m, 5)], pa, 36, 1), ValueError, "Target index out of bounds"),
        (([(m, 0)], pa, 36, 0), ValueError, "Target index out of bounds"),
        (([(m, 0)], 0, 36, 1), ValueError, "Null pointer"),
        (([(m, 0)], pa + 1, 36, 1), ValueError, "Pointer not aligned"),
        (([(m, 0)], pa, 32, 1), ValueError, "Invalid buffer size"),
        (([(m, -1)], pa, 36, 1), OverflowError, "negative"),
    ]
    for args, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            ex.unsafe_compute_mask_ptr(*args)
    with pytest.raises(ValueError, match="No matchers"):
        ex.consume_token_par([])
    with pytest.raises(RuntimeError, match="Already borrowed"):
        ex.consume_token_par([(m, 97), (m, 98)])
    assert not m.is_error()
    with pytest.raises(ValueError, match="Draft tokens must not be empty"):
        ex.unsafe_compute_mask_ptr_with_draft_token([(m, 0, [])], pa, 36, 1)
    with pytest.raises(ValueError, match=r"Expecting \(LLMatcher, int, List\[int\]\) tuple"):
        ex.unsafe_compute_mask_ptr_with_draft_token([(m, 0)], pa, 36, 1)
    with pytest.raises(ValueError, match="No interpreters"):
        ex.unsafe_compute_mask_ptr_with_draft_token([], pa, 36, 1)


def test_executor_fills_rows(byte_tok, ex):
    m = LLMatcher(byte_tok, AB)
    m2 = LLMatcher(byte_tok, 'start: "xyz"')
    merr = LLMatcher(byte_tok, "start: foo")
    a = np.zeros((4, 9), np.int32)
    ex.unsafe_compute_mask_ptr([(m, 0), (m2, 2), (merr, 3)], a.ctypes.data, 36, 4)
    assert [row_bits(r) for r in a] == [[97], [], [120], [261]]
    assert ex.consume_token_par([(m, 97), (m2, 97)]) == [True, False]
    assert bits(m.compute_bitmask()) == [98, 99]
    assert m2.is_error() and m2.get_error().startswith("Parser Error")
    assert ex.consume_token_par([(LLMatcher(byte_tok, AB, log_level=0), 100000)]) == [False]


def test_draft_rows(byte_tok, ex):
    m = LLMatcher(byte_tok, AB)
    a = np.full((6, 9), -1, np.int32)
    ex.unsafe_compute_mask_ptr_with_draft_token([(m, 0, [97, 98])], a.ctypes.data, 36, 6)
    rows = [row_bits(r) for r in a]
    assert rows[:3] == [[97], [98, 99], [261]]
    assert all(len(r) == 288 for r in rows[3:])  # untouched
    assert bits(m.compute_bitmask()) == [97] and not m.is_error()
    # A refused draft token: its row and the following are left alone.
    a[:] = -1
    ex.unsafe_compute_mask_ptr_with_draft_token([(m, 0, [97, 120, 98])], a.ctypes.data, 36, 6)
    rows = [row_bits(r) for r in a]
    assert rows[:2] == [[97], [98, 99]] and len(rows[2]) == 288
    assert not m.is_error()
    # Rows never go past the batch.
    a[:] = -1
    ex.unsafe_compute_mask_ptr_with_draft_token([(m, 1, [97, 98])], a.ctypes.data, 36, 2)
    rows = [row_bits(r) for r in a]
    assert len(rows[0]) == 288 and rows[1] == [97] and len(rows[2]) == 288
    # The matcher method, one matcher.
    a[:] = -1
    m.unsafe_compute_mask_ptr_with_draft_token(a.ctypes.data, 36, 3, [97, 99])
    assert [row_bits(r) for r in a[:3]] == [[97], [98, 99], [261]]


def test_numpy_helpers(byte_tok, ex):
    m = LLMatcher(byte_tok, AB)
    assert lnp.get_bitmask_shape(2, 262) == (2, 9)
    bm = lnp.allocate_token_bitmask(2, 262)
    assert bm.shape == (2, 9) and bm.dtype == np.int32 and (bm == -1).all()
    lnp.fill_next_token_bitmask(m, bm, 1)
    assert row_bits(bm[1]) == [97] and (bm[0] == -1).all()
    with pytest.raises(AssertionError, match="Mask must be int32"):
        lnp.fill_next_token_bitmask(m, np.zeros((1, 9), np.int64))
    with pytest.raises(AssertionError, match="Mask must be 2D"):
        lnp.fill_next_token_bitmask(m, np.zeros(9, np.int32))
    with pytest.raises(ValueError, match="Invalid buffer size"):
        lnp.fill_next_token_bitmask(m, np.zeros((1, 8), np.int32))
    lnp.fill_next_token_bitmask_par(ex, [(m, 0)], bm)
    assert row_bits(bm[0]) == [97]
    d = lnp.allocate_token_bitmask(3, 262)
    lnp.fill_next_token_bitmask_par_with_draft_tokens(ex, [(m, 0, [97])], d)
    assert [row_bits(r) for r in d[:2]] == [[97], [98, 99]]
    assert lnp.consume_token_par(ex, [(m, 97)]) == [True]
    logits = np.zeros((1, 262), np.float32)
    mask = np.zeros((1, 9), np.int32)
    m.unsafe_compute_mask_ptr(mask.ctypes.data, 36)
    lnp.apply_token_bitmask_inplace(logits, mask)
    assert np.isfinite(logits[0]).nonzero()[0].tolist() == [98, 99]
    wide = np.zeros(300, np.float32)
    lnp.apply_token_bitmask_inplace(wide, mask[0])
    assert np.isfinite(wide).nonzero()[0].tolist() == [98, 99]
    with pytest.raises(AssertionError, match="Batch size mismatch"):
        lnp.apply_token_bitmask_inplace(np.zeros((2, 262), np.float32), mask)


def test_executor_threads():
    assert LLExecutor().num_threads >= 1
    assert LLExecutor(num_threads=2).num_threads == 2
    assert LLExecutor(num_threads=0).num_threads >= 1
    with pytest.raises(OverflowError):
        LLExecutor(num_threads=-1)


def test_numpy_fill_cache(byte_tok):
    # fill_next_token_bitmask remembers the last array; other arrays, reshapes and bad
    # arrays must still be handled.
    m = LLMatcher(byte_tok, AB)
    a = lnp.allocate_token_bitmask(3, 262)
    b = lnp.allocate_token_bitmask(2, 262)
    lnp.fill_next_token_bitmask(m, a, 2)
    lnp.fill_next_token_bitmask(m, b, -1)
    assert row_bits(a[2]) == [97] and row_bits(b[1]) == [97]
    assert (a[:2] == -1).all() and (b[0] == -1).all()
    with pytest.raises(IndexError):
        lnp.fill_next_token_bitmask(m, a, 3)
    with pytest.raises(IndexError):
        lnp.fill_next_token_bitmask(m, a, -4)
    ro = np.broadcast_to(np.full(9, -1, np.int32), (4, 9))
    with pytest.raises(AssertionError, match="writable"):
        lnp.fill_next_token_bitmask(m, ro, 0)
    c = lnp.allocate_token_bitmask(4, 262)
    lnp.fill_next_token_bitmask(m, c, 0)
    c.shape = (2, 18)  # same memory, other shape: the wrong width is refused
    with pytest.raises(ValueError, match="Invalid buffer size"):
        lnp.fill_next_token_bitmask(m, c, 0)
    view = a[1:]
    lnp.fill_next_token_bitmask(m, view, 0)
    assert row_bits(a[1]) == [97]
