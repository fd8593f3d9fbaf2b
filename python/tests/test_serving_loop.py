"""What a serving loop does, on 16 matchers of different grammars sharing one bitmask:
fill rows in parallel, check each row against the matcher's own mask, sample (here: the
next token of a text the grammar accepts), consume in parallel, validate a draft and roll
back, then reset."""

import json

import numpy as np
import pytest

import llg_rs
import llg_rs.numpy as lnp
from llg_rs import LLExecutor, LLMatcher

CASES = [
    (LLMatcher.grammar_from_json_schema({"type": "integer"}), "12345"),
    (LLMatcher.grammar_from_json_schema({"type": "string", "maxLength": 12}), '"hello there"'),
    (LLMatcher.grammar_from_json_schema({"type": "array", "items": {"type": "boolean"}}), "[true, false]"),
    (LLMatcher.grammar_from_json_schema({
        "type": "object", "properties": {"a": {"type": "number"}, "b": {"enum": ["x", "y"]}},
        "required": ["a", "b"], "additionalProperties": False}), '{"a": 1.5, "b": "y"}'),
    (LLMatcher.grammar_from_json_schema({"type": "string", "format": "date"}), '"2024-02-29"'),
    (LLMatcher.grammar_from_json_schema({"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 3}]}), "42"),
    (LLMatcher.grammar_from_json_schema({"type": "object", "additionalProperties": {"type": "string"}}), '{"k": "v", "k2": ""}'),
    (LLMatcher.grammar_from_regex(r"[a-z]+@[a-z]+\.(com|org)"), "ada@example.org"),
    (LLMatcher.grammar_from_regex(r"\d{3}-\d{4}"), "555-1234"),
    ('start: "yes" | "no"', "no"),
    ('start: greeting " " NAME\ngreeting: "hi" | "hello"\nNAME: /[A-Z][a-z]+/', "hello World"),
    ('start: expr\nexpr: term (("+" | "-") term)*\nterm: NUM | "(" expr ")"\nNUM: /[0-9]+/', "(1+2)-30"),
    ('start: "<" %json {"type": "integer"} ">"', "<77>"),
    ('%llguidance {}\nstart: "list: " item ("," item)*\nitem: /[a-z]+/', "list: a,bc,def"),
    (llg_rs.grammar_from("choice", '["red", "green", "blue"]'), "green"),
    (llg_rs.grammar_from("gbnf", 'root ::= "v" [0-9]+ ("." [0-9]+)*'), "v1.22.3"),
]


@pytest.mark.parametrize("tok_name", ["byte", "o200k"])
def test_serving_loop(tok_name):
    tok = llg_rs.LLTokenizer(tok_name)
    ex = LLExecutor(num_threads=2)
    n = len(CASES)
    assert n == 16
    matchers = [LLMatcher(tok, g, log_level=0) for g, _ in CASES]
    for (g, _), m in zip(CASES, matchers):
        assert not m.is_error(), (g, m.get_error())
    targets = [tok.tokenize_str(text) + [tok.eos_token] for _, text in CASES]
    first = [m.compute_bitmask() for m in matchers]
    bitmask = lnp.allocate_token_bitmask(n, tok.vocab_size)
    pos = [0] * n
    steps = 0
    while True:
        live = [i for i in range(n) if not matchers[i].is_stopped()]
        if not live:
            break
        steps += 1
        assert steps < 200
        bitmask[:] = -1
        lnp.fill_next_token_bitmask_par(ex, [(matchers[i], i) for i in live], bitmask)
        for i in live:
            own = matchers[i].compute_bitmask()
            assert bitmask[i].tobytes() == own, (i, CASES[i][1])
            t = targets[i][pos[i]]
            assert (bitmask[i, t // 32] >> (t % 32)) & 1, (i, CASES[i][1], pos[i])
        # Speculation: the next three target tokens and a bad one are validated; the
        # state does not move.
        for i in live:
            draft = targets[i][pos[i]:pos[i] + 3]
            before = matchers[i].compute_bitmask()
            assert matchers[i].validate_tokens(draft) == len(draft)
            bad = draft[:1] + [tok.tokenize_str("\x07")[0]]
            assert matchers[i].validate_tokens(bad) == 1
            assert matchers[i].compute_bitmask() == before
            # Consume the draft, roll it back (an EOS after the grammar's end is not taken).
            k = matchers[i].try_consume_tokens(draft)
            assert k == len(draft) or (k == len(draft) - 1 and draft[-1] == tok.eos_token)
            assert matchers[i].rollback(k)
            assert matchers[i].compute_bitmask() == before
        ok = lnp.consume_token_par(ex, [(matchers[i], targets[i][pos[i]]) for i in live])
        assert ok == [True] * len(live)
        for i in live:
            pos[i] += 1
    for i, m in enumerate(matchers):
        assert not m.is_error(), (i, m.get_error())
        if m.stop_reason() == "NoExtension":
            # Stopped before EOS was sampled: a server ends the sequence; EOS is still taken.
            assert pos[i] == len(targets[i]) - 1
            assert m.consume_token(tok.eos_token)
            pos[i] += 1
        assert pos[i] == len(targets[i]), (i, CASES[i][1], pos[i])
        assert m.is_accepting()
        assert m.stop_reason() in ("EndOfSentence", "NoExtension")
        assert m.reset()
        assert m.compute_bitmask() == first[i]
