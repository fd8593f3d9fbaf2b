"""llg_rs.torch: bitmasks as torch int32 tensors (skipped when torch is not installed)."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch not installed: pip install torch (see python/README.md)")

import llg_rs  # noqa: E402
import llg_rs.numpy as lnp  # noqa: E402
import llg_rs.torch as lt  # noqa: E402
from llg_rs import LLExecutor, LLMatcher  # noqa: E402

from conftest import bits, row_bits  # noqa: E402

AB = 'start: "ab" | "ac"'
OK_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
PERSON_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def ex():
    return LLExecutor(num_threads=2)


@pytest.fixture(scope="module", params=["byte", "o200k"])
def tok(request):
    return llg_rs.LLTokenizer(request.param)


def tbits(row: "torch.Tensor") -> list:
    return row_bits(row.numpy())


def json_matcher(tok, schema):
    m = LLMatcher(tok, LLMatcher.grammar_from_json_schema(schema))
    assert not m.is_error(), m.get_error()
    return m


def test_shape_and_allocate(tok):
    n = tok.vocab_size
    words = (n + 31) // 32
    assert lt.get_bitmask_shape(3, n) == (3, words) == lnp.get_bitmask_shape(3, n)
    assert lt.get_bitmask_shape(1, 262) == (1, 9)
    assert lt.get_bitmask_shape(1, 256) == (1, 8)
    assert lt.get_bitmask_shape(2, 200019) == (2, 6251)
    bm = lt.allocate_token_bitmask(3, n)
    assert isinstance(bm, torch.Tensor)
    assert tuple(bm.shape) == (3, words)
    assert bm.dtype == torch.int32 and bm.is_cpu and bm.is_contiguous()
    assert (bm == -1).all()


def test_fill_next_token_bitmask_row(byte_tok):
    m = LLMatcher(byte_tok, AB)
    bm = lt.allocate_token_bitmask(2, byte_tok.vocab_size)
    lt.fill_next_token_bitmask(m, bm, 1)
    assert tbits(bm[1]) == [97]
    assert (bm[0] == -1).all()  # the other row is untouched
    assert bm[1].numpy().tobytes() == m.compute_bitmask()
    lt.fill_next_token_bitmask(m, bm)  # index defaults to 0
    assert tbits(bm[0]) == [97]
    m.consume_token(97)
    lt.fill_next_token_bitmask(m, bm, 0)
    assert tbits(bm[0]) == [98, 99] and tbits(bm[1]) == [97]


def test_fill_next_token_bitmask_json(tok):
    m = json_matcher(tok, OK_SCHEMA)
    bm = lt.allocate_token_bitmask(1, tok.vocab_size)
    for t in tok.tokenize_str('{"ok":true}'):
        lt.fill_next_token_bitmask(m, bm, 0)
        assert bm[0].numpy().tobytes() == m.compute_bitmask()
        assert t in tbits(bm[0])
        assert m.consume_token(t), m.get_error()
    lt.fill_next_token_bitmask(m, bm, 0)
    assert tbits(bm[0]) == [tok.eos_token]


def test_fill_next_token_bitmask_errors(byte_tok):
    m = LLMatcher(byte_tok, AB)
    with pytest.raises(AssertionError, match="Mask must be int32"):
        lt.fill_next_token_bitmask(m, torch.zeros((1, 9), dtype=torch.int64))
    with pytest.raises(AssertionError, match="Mask must be int32"):
        lt.fill_next_token_bitmask(m, torch.zeros((1, 9), dtype=torch.float32))
    with pytest.raises(AssertionError, match="Mask must be 2D"):
        lt.fill_next_token_bitmask(m, torch.zeros(9, dtype=torch.int32))
    with pytest.raises(AssertionError, match="Mask must be 2D"):
        lt.fill_next_token_bitmask(m, torch.zeros((1, 1, 9), dtype=torch.int32))
    # A transposed tensor: rows are strided, not contiguous.
    strided = torch.full((9, 2), -1, dtype=torch.int32).t()
    assert tuple(strided.shape) == (2, 9) and not strided[0].is_contiguous()
    with pytest.raises(AssertionError, match="Mask must be contiguous"):
        lt.fill_next_token_bitmask(m, strided, 0)
    # A row of the wrong width is refused by the engine.
    with pytest.raises(ValueError, match="Invalid buffer size"):
        lt.fill_next_token_bitmask(m, torch.zeros((1, 8), dtype=torch.int32))
    assert not m.is_error()


def test_fill_next_token_bitmask_par(tok, ex):
    grammars = [
        'start: "ab" | "ac"',
        LLMatcher.grammar_from_json_schema(OK_SCHEMA),
        LLMatcher.grammar_from_json_schema(PERSON_SCHEMA),
        'start: "x"+',
    ]
    matchers = [LLMatcher(tok, g) for g in grammars]
    assert not any(m.is_error() for m in matchers)
    # Advance some matchers, so the rows differ.
    assert matchers[1].consume_tokens(tok.tokenize_str('{"ok":'))
    assert matchers[2].consume_tokens(tok.tokenize_str('{"name":"Al'))
    bm = lt.allocate_token_bitmask(5, tok.vocab_size)
    # Row 1 is left alone; matcher K goes to row order[K].
    order = [0, 2, 3, 4]
    lt.fill_next_token_bitmask_par(ex, list(zip(matchers, order)), bm)
    assert (bm[1] == -1).all()
    for m, r in zip(matchers, order):
        assert bm[r].numpy().tobytes() == m.compute_bitmask()
    assert len({bm[r].numpy().tobytes() for r in order}) == 4
    # The same through the numpy helper.
    nb = lnp.allocate_token_bitmask(5, tok.vocab_size)
    lnp.fill_next_token_bitmask_par(ex, list(zip(matchers, order)), nb)
    assert np.array_equal(nb, bm.numpy())


def test_fill_next_token_bitmask_par_errors(byte_tok, ex):
    m = LLMatcher(byte_tok, AB)
    with pytest.raises(AssertionError, match="Mask must be int32"):
        lt.fill_next_token_bitmask_par(ex, [(m, 0)], torch.zeros((1, 9), dtype=torch.int64))
    with pytest.raises(AssertionError, match="Mask must be 2D"):
        lt.fill_next_token_bitmask_par(ex, [(m, 0)], torch.zeros(9, dtype=torch.int32))
    strided = torch.full((9, 2), -1, dtype=torch.int32).t()
    with pytest.raises(AssertionError, match="Mask must be contiguous"):
        lt.fill_next_token_bitmask_par(ex, [(m, 0)], strided)
    with pytest.raises(ValueError, match="Target index out of bounds"):
        lt.fill_next_token_bitmask_par(ex, [(m, 2)], lt.allocate_token_bitmask(2, 262))
    with pytest.raises(ValueError, match="Invalid buffer size"):
        lt.fill_next_token_bitmask_par(ex, [(m, 0)], torch.zeros((1, 8), dtype=torch.int32))


def test_fill_with_draft_tokens(byte_tok, ex):
    m = LLMatcher(byte_tok, AB)
    m2 = LLMatcher(byte_tok, 'start: "xyz"')
    bm = lt.allocate_token_bitmask(7, byte_tok.vocab_size)
    lt.fill_next_token_bitmask_par_with_draft_tokens(ex, [(m, 0, [97, 98]), (m2, 3, [120, 121])], bm)
    rows = [tbits(r) for r in bm]
    assert rows[:3] == [[97], [98, 99], [261]]
    assert rows[3:6] == [[120], [121], [122]]
    assert len(rows[6]) == 288  # untouched: all bits set
    # The matchers' state is unchanged.
    assert bits(m.compute_bitmask()) == [97] and bits(m2.compute_bitmask()) == [120]
    assert not m.is_error() and not m2.is_error()
    # A refused draft token: its row and those after it are left alone.
    bm.fill_(-1)
    lt.fill_next_token_bitmask_par_with_draft_tokens(ex, [(m, 0, [97, 120, 98])], bm)
    rows = [tbits(r) for r in bm]
    assert rows[:2] == [[97], [98, 99]] and len(rows[2]) == 288
    assert not m.is_error()
    with pytest.raises(AssertionError, match="Mask must be int32"):
        lt.fill_next_token_bitmask_par_with_draft_tokens(
            ex, [(m, 0, [97])], torch.zeros((2, 9), dtype=torch.int64)
        )
    with pytest.raises(AssertionError, match="Mask must be 2D"):
        lt.fill_next_token_bitmask_par_with_draft_tokens(ex, [(m, 0, [97])], torch.zeros(9, dtype=torch.int32))
    with pytest.raises(AssertionError, match="Mask must be contiguous"):
        lt.fill_next_token_bitmask_par_with_draft_tokens(
            ex, [(m, 0, [97])], torch.full((9, 2), -1, dtype=torch.int32).t()
        )


def test_fill_with_draft_tokens_json(o200k, ex):
    m = json_matcher(o200k, OK_SCHEMA)
    draft = o200k.tokenize_str('{"ok":true}')
    bm = lt.allocate_token_bitmask(len(draft) + 2, o200k.vocab_size)
    lt.fill_next_token_bitmask_par_with_draft_tokens(ex, [(m, 0, draft)], bm)
    # Row i is the mask after draft[:i]; check against a walking copy.
    walk = json_matcher(o200k, OK_SCHEMA)
    for i, t in enumerate(draft):
        assert bm[i].numpy().tobytes() == walk.compute_bitmask()
        assert walk.consume_token(t)
    assert tbits(bm[len(draft)]) == [o200k.eos_token]
    assert (bm[len(draft) + 1] == -1).all()
    assert m.compute_bitmask() == json_matcher(o200k, OK_SCHEMA).compute_bitmask()


def test_consume_token_par(tok, ex):
    m1 = LLMatcher(tok, AB)
    m2 = json_matcher(tok, OK_SCHEMA)
    m3 = LLMatcher(tok, 'start: "xyz"', log_level=0)
    a = tok.tokenize_str("a")
    brace = tok.tokenize_str("{")
    assert len(a) == 1 and len(brace) == 1
    assert lt.consume_token_par(ex, [(m1, a[0]), (m2, brace[0]), (m3, a[0])]) == [True, True, False]
    assert not m1.is_error() and not m2.is_error()
    assert m3.is_error() and m3.get_error().startswith("Parser Error")
    # Each matcher advanced by its own token.
    assert m1.validate_tokens(tok.tokenize_str("b")) == 1
    assert m2.validate_tokens(tok.tokenize_str('"ok"')) > 0
    assert lt.consume_token_par(ex, [(m1, tok.tokenize_str("c")[0])]) == [True]
    assert m1.is_accepting()
    assert lt.consume_token_par(ex, [(m1, tok.eos_token)]) == [True]
    assert m1.is_stopped()


def test_apply_token_bitmask_inplace_1d_2d(byte_tok):
    m = LLMatcher(byte_tok, AB)
    m.consume_token(97)
    mask = lt.allocate_token_bitmask(1, 262)
    lt.fill_next_token_bitmask(m, mask, 0)
    # 2-D logits, 2-D mask.
    logits = torch.zeros((1, 262))
    lt.apply_token_bitmask_inplace(logits, mask)
    assert torch.isfinite(logits[0]).nonzero().flatten().tolist() == [98, 99]
    assert torch.isneginf(logits).sum().item() == 260
    # 1-D logits, 1-D mask: the caller's tensor is changed in place.
    logits1 = torch.arange(262, dtype=torch.float32)
    lt.apply_token_bitmask_inplace(logits1, mask[0])
    assert torch.isfinite(logits1).nonzero().flatten().tolist() == [98, 99]
    assert logits1[98].item() == 98 and logits1[99].item() == 99
    # 1-D logits with a 2-D mask of one row.
    logits1 = torch.zeros(262)
    lt.apply_token_bitmask_inplace(logits1, mask)
    assert torch.isfinite(logits1).nonzero().flatten().tolist() == [98, 99]
    # Other float dtypes.
    for dt in (torch.float16, torch.bfloat16, torch.float64):
        lg = torch.zeros((1, 262), dtype=dt)
        lt.apply_token_bitmask_inplace(lg, mask)
        assert torch.isfinite(lg[0]).nonzero().flatten().tolist() == [98, 99]


def test_apply_token_bitmask_batch(tok, ex):
    matchers = [LLMatcher(tok, AB), json_matcher(tok, OK_SCHEMA), json_matcher(tok, PERSON_SCHEMA)]
    matchers[1].consume_tokens(tok.tokenize_str('{"ok": '))
    bm = lt.allocate_token_bitmask(3, tok.vocab_size)
    lt.fill_next_token_bitmask_par(ex, [(m, i) for i, m in enumerate(matchers)], bm)
    g = torch.Generator().manual_seed(0)
    logits = torch.randn((3, tok.vocab_size), generator=g)
    expect = logits.numpy().copy()
    lt.apply_token_bitmask_inplace(logits, bm)
    lnp.apply_token_bitmask_inplace(expect, bm.numpy())
    assert torch.equal(logits, torch.from_numpy(expect))
    for i, m in enumerate(matchers):
        allowed = bits(m.compute_bitmask())
        assert torch.isfinite(logits[i]).nonzero().flatten().tolist() == allowed
    # Sampling from masked logits only ever gives allowed tokens.
    picks = torch.multinomial(torch.softmax(logits, dim=-1), 20, replacement=True, generator=g)
    for i, m in enumerate(matchers):
        allowed = set(bits(m.compute_bitmask()))
        assert set(picks[i].tolist()) <= allowed


def test_apply_token_bitmask_wider_logits(tok):
    # Models often have more logits than the tokenizer has tokens; ids past the mask's
    # 32 * words bits are masked too.
    m = json_matcher(tok, OK_SCHEMA)
    mask = lt.allocate_token_bitmask(1, tok.vocab_size)
    lt.fill_next_token_bitmask(m, mask, 0)
    width = 32 * mask.shape[1] + 100
    logits = torch.zeros((1, width))
    expect = logits.numpy().copy()
    lt.apply_token_bitmask_inplace(logits, mask)
    lnp.apply_token_bitmask_inplace(expect, mask.numpy())
    assert torch.equal(logits, torch.from_numpy(expect))
    finite = torch.isfinite(logits[0]).nonzero().flatten().tolist()
    assert finite == bits(m.compute_bitmask())
    assert torch.isneginf(logits[0, 32 * mask.shape[1]:]).all()
    # An all-ones mask still masks the ids beyond it.
    ones = lt.allocate_token_bitmask(1, 262)
    lg = torch.zeros(300)
    lt.apply_token_bitmask_inplace(lg, ones)
    assert torch.isfinite(lg[:288]).all() and torch.isneginf(lg[288:]).all()


def test_apply_token_bitmask_narrower_logits(byte_tok):
    # Logits narrower than the mask: the extra bits are ignored.
    m = LLMatcher(byte_tok, AB)
    mask = lt.allocate_token_bitmask(1, 262)
    lt.fill_next_token_bitmask(m, mask, 0)
    logits = torch.zeros(200)
    expect = logits.numpy().copy()
    lt.apply_token_bitmask_inplace(logits, mask)
    lnp.apply_token_bitmask_inplace(expect, mask.numpy())
    assert torch.equal(logits, torch.from_numpy(expect))
    assert torch.isfinite(logits).nonzero().flatten().tolist() == [97]


def test_apply_token_bitmask_errors():
    mask = lt.allocate_token_bitmask(1, 262)
    with pytest.raises(AssertionError, match="Batch size mismatch"):
        lt.apply_token_bitmask_inplace(torch.zeros((2, 262)), mask)
    with pytest.raises(AssertionError, match="Batch size mismatch"):
        lt.apply_token_bitmask_inplace(torch.zeros(262), lt.allocate_token_bitmask(2, 262))
    with pytest.raises(AssertionError, match="Mask must be int32"):
        lt.apply_token_bitmask_inplace(torch.zeros((1, 262)), mask.to(torch.int64))
    with pytest.raises(AssertionError, match="Logits must be 2D"):
        lt.apply_token_bitmask_inplace(torch.zeros((1, 1, 262)), mask)


def test_masked_greedy_walk_produces_valid_json(tok):
    # A greedy decode over random logits, masked at each step, always yields the schema.
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 8},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
        },
        "required": ["name", "age"],
        "additionalProperties": False,
    }
    # Compact JSON: with the default flexible whitespace, random logits mostly pick
    # whitespace tokens and the walk never ends.
    grammar = LLMatcher.grammar_from_json_schema(schema, overrides={"whitespace_flexible": False})
    m = LLMatcher(tok, grammar)
    assert not m.is_error(), m.get_error()
    g = torch.Generator().manual_seed(1)
    bm = lt.allocate_token_bitmask(1, tok.vocab_size)
    out = []
    for _ in range(200):
        lt.fill_next_token_bitmask(m, bm, 0)
        logits = torch.randn(tok.vocab_size, generator=g)
        lt.apply_token_bitmask_inplace(logits, bm)
        t = int(torch.argmax(logits))
        assert m.consume_token(t), m.get_error()
        if t in tok.eos_tokens:
            break
        out.append(t)
        if m.is_stopped():
            break
    assert m.is_stopped() and not m.is_error()
    doc = json.loads(tok.decode_str(out))
    assert set(doc) == {"name", "age"}
    assert isinstance(doc["name"], str) and len(doc["name"]) <= 8
    assert isinstance(doc["age"], int) and 0 <= doc["age"] <= 150
