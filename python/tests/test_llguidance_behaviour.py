"""Behaviour LLGuidance documents for its Python API (its docs and its own tests describe
these cases; the cases here are written for llg_rs), on the byte tokenizer."""

import pytest

import llg_rs
from llg_rs import LLMatcher, LLParserLimits, LLTokenizer, StructTag

MARK = "\N{ASTERISM}"  # stands for the special-token marker byte in test strings


@pytest.fixture(scope="module")
def tok():
    return LLTokenizer("byte")


def tokens_of(tok, text):
    """Tokens of `text`; MARK before a special token's name makes it that token."""
    if MARK not in text:
        return tok.tokenize_str(text)
    data = (text + MARK + "[13]").encode().replace(MARK.encode(), b"\xff")
    toks, rest = tok.tokenize_partial(data)
    assert rest == b"" and toks[-1] == 13
    return toks[:-1]


def run(tok, grammar, text, ok):
    """Walk `text` token by token. ok=True: every token allowed and the end accepting;
    ok=False: some token refused; ok="end": every token allowed, the end not accepting."""
    m = LLMatcher(tok, grammar, log_level=0)
    assert not m.is_error(), m.get_error()
    toks = tokens_of(tok, text)
    for i, t in enumerate(toks):
        rest = toks[i:]
        n = m.validate_tokens(rest)
        if ok is False:
            assert n < len(rest), text
        else:
            assert n == len(rest), text
        bias = m.compute_logit_bias()
        if bias[t] == 0:
            assert ok is False, (text, i)
            return
        assert bias[t] == 200
        assert m.consume_token(t) and not m.is_error()
    assert ok is not False, f"{text!r} should have been refused"
    assert m.is_accepting() == (ok is True), text


def cases(tok, grammar, good, bad, bad_end=()):
    for s in good:
        run(tok, grammar, s, True)
    for s in bad:
        run(tok, grammar, s, False)
    for s in bad_end:
        run(tok, grammar, s, "end")


def test_json_cases(tok):
    g = LLMatcher.grammar_from_json_schema({"type": "object"}, {"whitespace_flexible": False})
    cases(tok, g, ["{}", '{"a":[1,{}]}'], [" {}", "{ }"], ["{"])
    g = LLMatcher.grammar_from_json_schema(
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    cases(tok, g, ['{"n":1}', '{"n":1,"m":2}', '{ "n" : 1 }'], ["{}", ' {"n":1}', '{"m":1}'], ["{"])


def test_lark_counts_characters(tok):
    g = 'start: /../ "xy" /../'
    cases(tok, g, ["abxycd", "é✅xy🔵ü"], ["axycd", "abcxycd", "é✅🟠xy🔵ü", "abxycde"], ["abxyc"])


def test_regex_and_errors(tok):
    cases(tok, LLMatcher.grammar_from_regex(r"[0-9]+"), ["7", "2024"], ["x", "1x2"])
    assert "no_such_rule" in LLMatcher(tok, "start: /a/ no_such_rule").get_error()
    assert "no_such_rule" in LLMatcher.validate_grammar("start: /a/ no_such_rule")
    assert "no_such_rule" in LLMatcher.validate_grammar("start: /a/ no_such_rule", tok)
    bad = LLMatcher.grammar_from_regex("unclosed (")
    assert "invalid regex" in LLMatcher.validate_grammar(bad)
    assert "invalid regex" in LLMatcher.validate_grammar(bad, tok)


def walk_checked(m, tok, toks):
    """Consume `toks`, each in the mask, the matcher not stopped or accepting before."""
    for t in toks:
        assert m.stop_reason() == "NotStopped" and not m.is_stopped() and not m.is_accepting()
        assert m.compute_logit_bias()[t] == 200
        assert m.compute_bitmask()[t // 8] >> (t % 8) & 1
        m.consume_token(t)
    assert not m.is_error()


def test_no_extension(tok):
    m = LLMatcher(tok, "start: /[xX][yY][zZ]/")
    walk_checked(m, tok, tok.tokenize_str("xYz"))
    assert m.is_accepting() and m.is_stopped() and m.stop_reason() == "NoExtension"


def test_rollback_and_copies(tok):
    m = LLMatcher(tok, "start: /[pP] [qQ] [rR]/")
    fresh = m.deep_copy()
    t = tok.tokenize_str("p q r")
    walk_checked(m, tok, t[:3])
    m.rollback(2)
    mid = m.deep_copy()
    walk_checked(m, tok, t[1:])
    assert m.is_stopped() and m.is_accepting()
    m.rollback(1)
    assert not m.is_stopped() and not m.is_accepting() and m.stop_reason() == "NotStopped"
    walk_checked(m, tok, t[-1:])
    assert m.compute_logit_bias()[tok.eos_token] == 200
    m.consume_token(tok.eos_token)
    assert not m.is_error()
    walk_checked(fresh, tok, t)
    assert fresh.is_stopped() and fresh.is_accepting()
    assert mid.consume_tokens(t[1:]) and mid.is_accepting()


def test_forced_bytes(tok):
    m = LLMatcher(tok, "start: /(abc[45]67|xyz)/")
    toks = tok.tokenize_str("abc567")
    expect = ["", "bc", "c", "", "67"]
    for i, e in enumerate(expect):
        assert m.compute_ff_bytes() == e.encode(), i
        assert m.compute_ff_tokens() == tok.tokenize_str(e), i
        walk_checked(m, tok, toks[i:i + 1])
    walk_checked(m, tok, toks[5:])
    assert m.stop_reason() == "NoExtension"
    assert m.compute_ff_bytes() == b"" and m.compute_ff_tokens() == []


def test_try_consume_and_errors(tok):
    g = "start: /(abc[45]67|xyz)/"
    m = LLMatcher(tok, g, log_level=0)
    toks = tok.tokenize_str("abc967")
    assert m.try_consume_tokens(toks) == 3 and not m.is_error()
    walk_checked(m, tok, tok.tokenize_str("567"))
    m = LLMatcher(tok, g, log_level=0)
    m.consume_tokens(toks[:3])
    assert m.compute_logit_bias()[toks[3]] == 0
    assert m.consume_token(toks[3]) is False
    assert "doesn't satisfy the grammar" in m.get_error() and m.stop_reason() == "InternalError"
    far = tok.vocab_size + 7
    m = LLMatcher(tok, g, log_level=0)
    assert m.consume_tokens(toks[:3] + [far]) is False and "out of range" in m.get_error()
    m = LLMatcher(tok, g, log_level=0)
    assert m.validate_tokens(toks[:3] + [far]) == 0
    assert m.is_error() and "out of range" in m.get_error()


def test_struct_tags_in_text(tok):
    tags = [
        StructTag(trigger="<call", begin="<call=a>", grammar={"type": "object"}, end="</call>"),
        StructTag(trigger="<call", begin="<call=b>", grammar={"type": "object"}, end="</call>"),
    ]
    a, b = "<call=a>{}</call>", '<call=b>{"k":2}</call>'
    good = [a, a + b, f"{a}x\ny{b}", "pre" + a, a + "post", "123", "zz<Call=1", "</call>"]
    bad = ["<call= a>{}</call>", "<call =a>{}</call>", "<call=a>7</call>", "<call=a> {}</call>"]
    cases(tok, StructTag.to_grammar(tags), good, bad, [a[:-1]])
    tags.append(StructTag(trigger="<|tool|>", begin="<|tool|>f(", grammar='start: /[0-9]+/ ("," /[0-9]+/)*', end=")"))
    g = StructTag.to_grammar(tags)
    cases(tok, g, good, bad)
    call = MARK + "<|tool|>f(3,45)"
    # The tool tag is the special token; the same text without it is plain text.
    cases(tok, g, [call, "a" + call + b, call + "zz" + a, "<|tool|>g(1)"], [MARK + "<|tool|>g(1)"])


def test_limits_and_warnings(tok):
    m = LLMatcher(tok, "start: /(abc[45]67|xyz)/", limits=LLParserLimits(initial_lexer_fuel=5))
    assert "initial lexer configuration (grammar) too big" in m.get_error()
    m = LLMatcher(tok, 'start: "ab" | "ac"', limits=LLParserLimits(max_grammar_size=2))
    assert "grammar size (number of symbols) too big" in m.get_error()
    is_err, msgs = LLMatcher.validate_grammar_with_warnings("start: <[100]>* <[7]>", tokenizer=None)
    assert not is_err and "no tokenizer" in msgs[0]
    # An unknown format: LLGuidance's error unless `lenient`; ours a warning unless
    # `strict_formats` (docs/differences.md, 35).
    for options, strict in [({}, False), ({"lenient": True}, False), ({"strict_formats": True}, True)]:
        g = LLMatcher.grammar_from_json_schema(
            {"type": "object", "properties": {"d": {"type": "string", "format": "no_such_format"}}},
            overrides=options)
        is_err, msgs = LLMatcher.validate_grammar_with_warnings(g, tokenizer=tok)
        assert "no_such_format" in msgs[0] and is_err == strict
        m = LLMatcher(tok, g)
        if strict:
            assert m.is_error() and 'unsupported format "no_such_format"' in m.get_error()
        else:
            assert 'unknown format "no_such_format"' in m.get_grammar_warnings()[0]


def test_eos_after_the_end(tok):
    g = 'start: "no"'
    m = LLMatcher(tok, g)
    assert m.try_consume_tokens([110, 111, 261]) == 2 and m.stop_reason() == "NoExtension"
    assert m.try_consume_tokens([261]) == 0
    assert m.consume_token(261) and m.stop_reason() == "NoExtension"
    m = LLMatcher(tok, g)
    assert m.validate_tokens([110, 111, 261, 261]) == 3
    assert m.consume_tokens([110, 111, 261]) and m.stop_reason() == "EndOfSentence"
    assert m.rollback(1) and m.stop_reason() == "NotStopped" and not m.is_stopped()
    m = LLMatcher(tok, 'start: "no" "o"*')
    assert m.consume_tokens([110, 111]) and not m.is_stopped()
    assert m.try_consume_tokens([261]) == 1 and m.stop_reason() == "EndOfSentence"
    assert m.try_consume_tokens([261]) == 0 and m.consume_token(261) and not m.is_error()
