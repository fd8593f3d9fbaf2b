"""A request's own stop set (``LLMatcher(..., stop_tokens=[...])``, XGrammar's
override_stop_tokens): each id masked until the grammar accepts, allowed once it does, and
ending the matcher; the tokenizer's EOS then is not a stop; a text token is an error."""

import llg_rs
from conftest import bits


def test_stop_tokens_replace_the_eos(o200k):
    eos = o200k.eos_token
    other = o200k.tokenize_str("<|endofprompt|>", parse_special=True)
    specials = [t for t in other if t != eos and o200k.is_special_token(t)]
    assert specials, "o200k has <|endofprompt|> as a special token"
    stop = specials[0]
    g = llg_rs.LLMatcher.grammar_from_json_schema('{"type": "array", "items": {"type": "integer"}}')
    m = llg_rs.LLMatcher(o200k, g, stop_tokens=[stop])
    assert not m.is_error(), m.get_error()
    assert stop not in bits(m.compute_bitmask()) and eos not in bits(m.compute_bitmask())
    assert m.consume_tokens(o200k.tokenize_str("[1, 2]"))
    mask = bits(m.compute_bitmask())
    assert stop in mask and eos not in mask
    assert m.consume_token(stop) and m.is_stopped()
    # Default: the tokenizer's EOS, as before.
    m = llg_rs.LLMatcher(o200k, g)
    assert m.consume_tokens(o200k.tokenize_str("[1]"))
    mask = bits(m.compute_bitmask())
    assert eos in mask and stop not in mask
    # A text token cannot be a stop.
    m = llg_rs.LLMatcher(o200k, g, stop_tokens=o200k.tokenize_str("x"))
    assert m.is_error() and "not a special token" in m.get_error()
