"""Served masks, as LLGuidance's: where the grammar forces the next bytes, the mask holds only
the first token of their canonical tokenization (the first of compute_ff_tokens()); the pure
mask (every grammar-consistent token) is an llg_rs option."""

import llg_rs
from conftest import bits


def test_forced_key_allows_only_the_first_forced_token(o200k):
    schema = '{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": false}'
    m = llg_rs.LLMatcher(o200k, llg_rs.LLMatcher.grammar_from_json_schema(schema))
    assert not m.is_error(), m.get_error()
    for t in o200k.tokenize_str('{"'):
        assert m.consume_token(t)
    ff = m.compute_ff_tokens()
    assert ff, "the key is forced"
    assert bits(m.compute_bitmask()) == [ff[0]]
    # The pure mask also has the shorter spellings of the forced text ("n", "na", ...).
    m.pure_masks = True
    pure = bits(m.compute_bitmask())
    assert ff[0] in pure and len(pure) > 1
    n = o200k.tokenize_str("n")
    assert n[0] in pure


def test_forced_prefix_then_free_text(o200k):
    m = llg_rs.LLMatcher(o200k, 'start: "Answer: " /[a-z]+/')
    ff = m.compute_ff_tokens()
    assert bits(m.compute_bitmask()) == [ff[0]]
    # Consuming the forced tokens one by one: each mask is the next forced token, until
    # nothing is forced (the free text), where the mask is the pure one.
    steps = 0
    while m.compute_ff_tokens():
        first = m.compute_ff_tokens()[0]
        assert bits(m.compute_bitmask()) == [first]
        assert m.consume_token(first)
        steps += 1
        assert steps < 10
    free = bits(m.compute_bitmask())
    assert len(free) > 100


def test_served_mask_token_is_in_the_pure_mask_along_a_walk(o200k):
    # Every served mask is a subset of the pure mask at the same position.
    schema = '{"type": "object", "properties": {"a": {"type": "integer"}, "bb": {"enum": ["x", "yy"]}}, "required": ["a", "bb"]}'
    m = llg_rs.LLMatcher(o200k, llg_rs.LLMatcher.grammar_from_json_schema(schema))
    p = m.deep_copy()
    p.pure_masks = True
    for t in o200k.tokenize_str('{"a": 12, "bb": "yy"}'):
        served = set(bits(m.compute_bitmask()))
        pure = set(bits(p.compute_bitmask()))
        assert served and served <= pure
        assert m.consume_token(t) == p.consume_token(t)


def test_rollback_of_nothing_keeps_a_stop(o200k):
    # LLGuidance: rollback(0) changes nothing, a stop included (SGLang calls it after an EOS
    # accepted past the stop).
    m = llg_rs.LLMatcher(o200k, 'start: "yes"')
    assert m.consume_tokens(o200k.tokenize_str("yes"))
    assert m.is_stopped() and m.stop_reason() == "NoExtension"
    assert m.rollback(0)
    assert m.is_stopped() and m.stop_reason() == "NoExtension"
    assert m.rollback(1)
    assert not m.is_stopped()
