import concurrent.futures
import copy
import json

import pytest

import llg_rs
from llg_rs import LLMatcher, LLParserLimits

from conftest import bits

AB = 'start: "ab" | "ac"'


def test_basic_walk(byte_tok):
    m = LLMatcher(byte_tok, AB)
    assert not m.is_error() and m.get_error() == ""
    assert bits(m.compute_bitmask()) == [97]
    assert len(m.compute_bitmask()) == 36
    assert [i for i, v in enumerate(m.compute_logit_bias()) if v] == [97]
    assert set(m.compute_logit_bias()) == {0, 200}
    assert m.compute_ff_tokens() == [97] and m.compute_ff_bytes() == b"a"
    assert not m.is_accepting() and not m.is_stopped() and m.stop_reason() == "NotStopped"
    assert m.consume_token(97)
    assert bits(m.compute_bitmask()) == [98, 99]
    assert m.validate_tokens([98, 98]) == 1
    assert m.validate_tokens([99, 261]) == 2 and m.validate_tokens([99, 261, 261]) == 2
    assert m.validate_tokens([120]) == 0 and m.validate_tokens([]) == 0
    assert m.try_consume_tokens([98, 98]) == 1
    # After the end of the grammar: try_consume and validate take nothing (EOS is only
    # counted when the end is reached within the list).
    assert m.try_consume_tokens([261]) == 0
    assert m.validate_tokens([261, 261]) == 0
    assert m.is_accepting() and m.is_stopped() and m.stop_reason() == "NoExtension"
    assert bits(m.compute_bitmask()) == [261]
    assert m.consume_token(261) and m.stop_reason() == "NoExtension"
    assert m.consume_token(261) and not m.is_error()
    assert not m.consume_token(97)
    assert m.is_error() and m.stop_reason() == "InternalError"
    assert m.get_error().startswith("parser stopped in consume_token")


def test_end_of_sentence_and_rollback(byte_tok):
    m = LLMatcher(byte_tok, 'start: "a"+', log_level=0)
    assert m.consume_tokens([97, 97, 261])
    assert m.stop_reason() == "EndOfSentence" and m.is_stopped()
    assert m.rollback(1) and m.stop_reason() == "NotStopped"
    assert bits(m.compute_bitmask()) == [97, 261]
    assert m.rollback(2) and bits(m.compute_bitmask()) == [97]
    assert m.rollback(0)
    assert not m.rollback(1)
    assert m.is_error() and m.get_error().startswith("rollback: 1 > 0")
    assert not m.reset()
    with pytest.raises(OverflowError):
        LLMatcher(byte_tok, AB).rollback(-1)


def test_reset(byte_tok):
    m = LLMatcher(byte_tok, AB)
    first = m.compute_bitmask()
    m.consume_tokens([97, 98])
    assert m.reset() and m.compute_bitmask() == first and not m.is_stopped()


def test_rejected_tokens(byte_tok):
    m = LLMatcher(byte_tok, AB, log_level=0)
    assert not m.consume_token(120)
    assert m.is_error() and m.is_stopped() and not m.is_accepting()
    assert m.get_error().startswith('Parser Error: token "x" doesn\'t satisfy the grammar')
    assert m.stop_reason() == "InternalError"
    assert bits(m.compute_bitmask()) == [261]
    m = LLMatcher(byte_tok, AB, log_level=0)
    assert not m.consume_token(100000)
    assert m.get_error().startswith("token id 100000 out of range")
    m = LLMatcher(byte_tok, AB, log_level=0)
    with pytest.raises(OverflowError):
        m.consume_token(-1)
    assert not m.is_error()
    assert m.try_consume_tokens([97, 120]) == 1 and not m.is_error()
    assert m.consume_tokens([]) is True
    m = LLMatcher(byte_tok, AB, log_level=0)
    assert not m.consume_tokens([97, 120]) and m.is_error()


def test_warning_on_stderr(byte_tok, capfd):
    LLMatcher(byte_tok, AB).consume_token(120)
    assert "Warning: Parser Error" in capfd.readouterr().err
    LLMatcher(byte_tok, AB, log_level=0).consume_token(120)
    assert capfd.readouterr().err == ""


def test_grammar_error_state(byte_tok):
    m = LLMatcher(byte_tok, "start: foo")
    assert m.is_error() and "foo" in m.get_error()
    assert m.is_stopped() and not m.is_accepting() and m.stop_reason() == "InternalError"
    assert bits(m.compute_bitmask()) == [261]
    assert m.compute_ff_tokens() == [] and m.compute_ff_bytes() == b""
    assert not m.consume_token(97) and not m.rollback(0) and not m.reset()
    assert m.validate_tokens([97]) == 0
    assert m.deep_copy().is_error()
    # Never raises for grammar errors, whatever the input.
    for g in ["", "{bad", '{"grammars": []}', '{"foo": 1}', "start: /[/", 123, None, {"a": 1}]:
        assert LLMatcher(byte_tok, g).is_error(), g


def test_deep_copy(byte_tok):
    m = LLMatcher(byte_tok, AB)
    m.consume_token(97)
    c = m.deep_copy()
    c.consume_token(98)
    assert c.is_stopped() and not m.is_stopped()
    assert bits(m.compute_bitmask()) == [98, 99]
    d = copy.deepcopy(m)
    assert bits(d.compute_bitmask()) == [98, 99]


def test_max_tokens(byte_tok):
    g = '{"grammars":[{"lark_grammar":"start: /a+/"}],"max_tokens":2}'
    m = LLMatcher(byte_tok, g, log_level=0)
    assert m.consume_tokens([97, 97]) and not m.is_stopped()
    assert bits(m.compute_bitmask()) == [97, 261]
    assert not m.consume_token(97)
    assert m.get_error() == "max_tokens_total reached" and m.stop_reason() == "InternalError"


def test_captures(byte_tok):
    g = 'start: foo " " bar\nfoo[capture]: /[a-z]+/\nbar[capture="b"]: /[0-9]+/'
    m = LLMatcher(byte_tok, g)
    assert m.consume_tokens(byte_tok.tokenize_str("xy 12"))
    assert m.get_capture("foo") == b"xy"
    assert m.get_capture("none") is None
    assert ("foo", b"xy") in m.get_captures()


def test_top_level_json(byte_tok):
    g = json.dumps({"grammars": [
        {"name": "x", "lark_grammar": 'start: "n=" @y'},
        {"name": "y", "json_schema": {"type": "integer"}},
    ]})
    m = LLMatcher(byte_tok, g)
    assert not m.is_error(), m.get_error()
    assert m.consume_tokens(byte_tok.tokenize_str("n=42")) and m.is_accepting()


def test_grammar_helpers(byte_tok):
    assert LLMatcher.grammar_from_lark('start: "a"') == 'start: "a"'
    g = LLMatcher.grammar_from_regex("a+")
    assert json.loads(g)["grammars"][0]["lark_grammar"] == "start: /a+/"
    s = LLMatcher.grammar_from_json_schema({"type": "string"})
    assert json.loads(s) == {"grammars": [{"json_schema": {"type": "string"}}]}
    s = LLMatcher.grammar_from_json_schema(
        '{"type":"object","x-guidance":{"coerce_one_of":false}}',
        defaults={"whitespace_flexible": False, "coerce_one_of": True},
        overrides={"lenient": True},
    )
    assert json.loads(s)["grammars"][0]["json_schema"]["x-guidance"] == {
        "whitespace_flexible": False, "coerce_one_of": False, "lenient": True}
    # Schema text is wrapped unchecked (as LLGuidance does); the matcher reports it.
    assert LLMatcher(llg_rs.LLTokenizer("byte"), LLMatcher.grammar_from_json_schema("not json")).is_error()
    with pytest.raises(ValueError):
        LLMatcher.grammar_from_json_schema({"type": "string"}, defaults="not json")
    for g in [s, LLMatcher.grammar_from_regex("a+"), 'start: "a"']:
        assert LLMatcher.validate_grammar(g) == ""
        assert LLMatcher.validate_grammar(g, byte_tok) == ""
        assert LLMatcher.validate_grammar(g, tokenizer=byte_tok) == ""
        assert LLMatcher.validate_grammar_with_warnings(g) == (False, [])
    err = LLMatcher.validate_grammar("start: foo")
    assert "foo" in err
    assert LLMatcher.validate_grammar_with_warnings("start: foo") == (True, [err])
    # An unknown format is an annotation, with a warning naming it.
    unknown = LLMatcher.grammar_from_json_schema({"type": "string", "format": "foo"})
    is_err, warnings = LLMatcher.validate_grammar_with_warnings(unknown)
    assert not is_err and warnings and "foo" in warnings[0]
    assert LLMatcher(byte_tok, unknown).get_grammar_warnings() == warnings


def test_grammar_from():
    assert llg_rs.grammar_from("lark", 'start: "a"') == 'start: "a"'
    assert llg_rs.grammar_from("choice", '["a", "b"]') == 'start: "a" | "b"'
    assert llg_rs.grammar_from("llguidance", "x") == "x"
    with pytest.raises(ValueError, match="Unknown grammar type: foo"):
        llg_rs.grammar_from("foo", "x")
    t = llg_rs.LLTokenizer("byte")
    for fmt, text, good in [
        ("gbnf", 'root ::= "a" | [0-9]+', "123"),
        ("ebnf", 'start: "a" | /[0-9]+/', "123"),
        ("json", '{"type":"integer"}', "-5"),
        ("regex", "a+b", "aab"),
    ]:
        m = LLMatcher(t, llg_rs.grammar_from(fmt, text))
        assert not m.is_error(), (fmt, m.get_error())
        assert m.consume_tokens(t.tokenize_str(good)) and m.is_accepting(), fmt
    with pytest.raises(ValueError, match="GBNF"):
        llg_rs.grammar_from("gbnf", 'root ::= "a')


def test_grammar_from_structural_tag():
    # XGrammar's structural tag (dict or text): Qwen3-Coder-style XML parameters after a
    # trigger, free text around; a raw enum value and a JSON integer.
    tag = {
        "type": "structural_tag",
        "format": {
            "type": "triggered_tags",
            "triggers": ["<function="],
            "tags": [{
                "begin": "<function=f>",
                "content": {
                    "type": "json_schema",
                    "style": "qwen_xml",
                    "json_schema": {"type": "object", "properties": {
                        "unit": {"type": "string", "enum": ["c", "f"]},
                        "n": {"type": "integer"}}, "required": ["unit"]},
                },
                "end": "</function>",
            }],
        },
    }
    t = llg_rs.LLTokenizer("byte")
    for src in (tag, json.dumps(tag)):
        g = llg_rs.grammar_from("structural_tag", src)
        ok = "hi <function=f><parameter=unit>c</parameter><parameter=n> 3 </parameter></function> bye"
        m = LLMatcher(t, g)
        assert not m.is_error(), m.get_error()
        assert m.consume_tokens(t.tokenize_str(ok)) and m.is_accepting()
        m = LLMatcher(t, g)
        bad = "hi <function=f><parameter=unit>k"
        assert not m.consume_tokens(t.tokenize_str(bad)), "an enum value outside the list"
    m = LLMatcher(t, llg_rs.grammar_from("structural_tag", '{"type": "structural_tag", "format": {"type": "nope"}}'))
    assert m.is_error() and "format type" in m.get_error()
    with pytest.raises(ValueError, match="JSON object"):
        llg_rs.grammar_from("structural_tag", "[1]")


def test_struct_tag(byte_tok):
    tag = llg_rs.StructTag(trigger="<func", begin="<func=f>", grammar={"type": "integer"}, end="</func>")
    g = llg_rs.StructTag.to_grammar([tag])
    m = LLMatcher(byte_tok, g)
    assert not m.is_error(), m.get_error()
    assert m.consume_tokens(byte_tok.tokenize_str("hello <func=f>12</func> bye"))
    assert m.is_accepting()
    m = LLMatcher(byte_tok, g, log_level=0)
    assert not m.consume_tokens(byte_tok.tokenize_str("hello <func=f>x"))
    lark_body = llg_rs.StructTag(trigger="<g", begin="<g>", grammar='start: "x" | "y"', end="</g>")
    g2 = llg_rs.StructTag.to_grammar([tag, lark_body])
    m = LLMatcher(byte_tok, g2)
    assert not m.is_error(), m.get_error()
    assert m.consume_tokens(byte_tok.tokenize_str("a<g>y</g>b<func=f>1</func>")) and m.is_accepting()
    special = llg_rs.StructTag(trigger="<|tool|>", begin="<|tool|>", grammar={"type": "integer"}, end="<|/tool|>")
    m = LLMatcher(byte_tok, llg_rs.StructTag.to_grammar([special]))
    assert not m.is_error(), m.get_error()
    # The trigger is the special token; the end is text.
    assert m.consume_tokens(byte_tok.tokenize_str("hi") + [256] + byte_tok.tokenize_str("7<|/tool|>"))
    with pytest.raises(AssertionError):
        llg_rs.StructTag(trigger="<a", begin="x", grammar={}, end="")
    with pytest.raises(AssertionError):
        llg_rs.StructTag.to_grammar([])


def test_regex_to_lark():
    assert llg_rs.regex_to_lark(r"\d+\w") == r"\d+\w"
    assert llg_rs.regex_to_lark(r"\d+\w", "dw") == "[0-9]+[0-9a-zA-Z_]"
    assert llg_rs.regex_to_lark(r"\D\W\S\s", "dws") == r"[^0-9][^0-9a-zA-Z_][^ \t\n\r\f\v][ \t\n\r\f\v]"
    assert llg_rs.regex_to_lark("a/b") == r"a\/b"
    assert llg_rs.regex_to_lark("\n") == r"\n"
    assert llg_rs.regex_to_lark(r"\\d", "d") == r"\\d"


def test_deprecated_compilers():
    g = llg_rs.JsonCompiler().compile('{"type":"integer"}')
    assert json.loads(g)["grammars"][0]["json_schema"]["x-guidance"]["item_separator"] == ", "
    with pytest.raises(ValueError):
        llg_rs.JsonCompiler().compile('{"type":"foo"}')
    assert json.loads(llg_rs.LarkCompiler().compile('start: "a"'))["grammars"][0]["lark_grammar"] == 'start: "a"'
    with pytest.raises(ValueError):
        llg_rs.LarkCompiler().compile("start: foo")
    assert "start: /a+/" in llg_rs.RegexCompiler().compile("a+")
    with pytest.raises(ValueError):
        llg_rs.RegexCompiler().compile("[")


def test_limits(byte_tok):
    lim = LLParserLimits()
    assert lim.max_items_in_row == 2000 and lim.max_grammar_size == 500000
    assert lim.verbose_errors is True
    assert repr(LLParserLimits(max_items_in_row=5)).startswith("ParserLimits { max_items_in_row: 5,")
    with pytest.raises(TypeError):
        LLParserLimits(5)
    small = LLMatcher(byte_tok, AB, limits=LLParserLimits(max_grammar_size=1))
    assert small.is_error()
    assert not LLMatcher(byte_tok, AB, limits=LLParserLimits()).is_error()
    assert LLMatcher.validate_grammar(AB, byte_tok, limits=LLParserLimits(max_grammar_size=1)) != ""


def test_version():
    assert llg_rs.get_version().startswith("llg_rs@")
    assert isinstance(llg_rs.__version__, str)


def test_thread_pool_compiles(o200k):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}

    def make(i):
        m = LLMatcher(o200k, LLMatcher.grammar_from_json_schema(schema))
        ok = m.consume_tokens(o200k.tokenize_str('{"a":' + str(i) + "}"))
        return m.is_error(), ok, m.is_accepting()

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert list(pool.map(make, range(8))) == [(False, True, True)] * 8


def test_o200k_json(o200k):
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}},
              "required": ["name", "n"], "additionalProperties": False}
    m = LLMatcher(o200k, LLMatcher.grammar_from_json_schema(schema))
    text = '{"name": "Ada", "n": 7}'
    for t in o200k.tokenize_str(text):
        assert t in bits(m.compute_bitmask())
        assert m.consume_token(t)
    assert m.is_accepting()
    assert o200k.eos_token in bits(m.compute_bitmask())


def test_same_grammar_per_request(o200k):
    # A server builds a matcher per request from the request's grammar string; the
    # tokenizer's factory keeps the compiled grammar (the second request is not compiled
    # again). Every request gets the same masks, its own state, and the grammar's
    # max_tokens; a failing grammar fails every time.
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
                                               "n": {"type": "integer"}}, "required": ["name"]}
    g = json.dumps({"grammars": [{"json_schema": schema}]})
    toks = o200k.tokenize_str('{"name":"ab","n":7}')
    masks = []
    for _ in range(3):
        m = LLMatcher(o200k, g)
        assert not m.is_error(), m.get_error()
        seen = []
        for t in toks:
            seen.append(bytes(m.compute_bitmask()))
            assert m.consume_token(t), m.get_error()
        assert m.is_accepting()
        masks.append(seen)
    assert masks[0] == masks[1] == masks[2]
    short = '{"grammars":[{"lark_grammar":"start: /a+/"}],"max_tokens":2}'
    a = o200k.tokenize_str("a")[0]
    for _ in range(2):
        m = LLMatcher(o200k, short, log_level=0)
        assert m.consume_tokens([a, a]) and not m.consume_token(a)
        assert m.get_error() == "max_tokens_total reached"
    bad = json.dumps({"grammars": [{"json_schema": {"type": "strin"}}]})
    for _ in range(2):
        assert LLMatcher(o200k, bad).is_error()
