"""Cancellation and compile deadlines (LLGuidance 1.9's contract): a cancelled matcher gives
no mask (all zeros, never EOS only), reports "Cancelled", and nothing revives it; a compile
given a cancelled handle or a deadline it cannot meet leaves the matcher in its error state
with a message naming why; the GIL is released while the engine works, so another Python
thread can cancel."""

import threading

import llg_rs
from conftest import bits

SCHEMA = '{"type": "object", "properties": {"a": {"type": "integer"}, "h": {"type": "string", "format": "hostname"}}}'


def test_a_cancelled_matcher_gives_no_mask_and_stays_cancelled(o200k):
    m = llg_rs.LLMatcher(o200k, llg_rs.LLMatcher.grammar_from_json_schema(SCHEMA))
    assert not m.is_cancelled()
    h = m.cancellation_handle()
    assert isinstance(h, llg_rs.CancellationHandle) and not h.is_cancelled()
    assert m.consume_tokens(o200k.tokenize_str('{"a": 1'))
    assert bits(m.compute_bitmask()), "a mask before the request"
    before = m.deep_copy()
    h.cancel()
    assert h.is_cancelled() and m.is_cancelled() and m.is_stopped()
    assert m.stop_reason() == "Cancelled"
    assert bits(m.compute_bitmask()) == [], "no mask, not even EOS"
    assert m.is_error() and "cancelled" in m.get_error()
    assert not m.reset() and not m.rollback(1) and not m.consume_token(90)
    assert m.compute_ff_tokens() == []
    assert m.stop_reason() == "Cancelled"
    # A copy made before the request is independent.
    assert not before.is_cancelled() and bits(before.compute_bitmask())


def test_compiles_stop_on_a_cancelled_handle_and_on_their_deadline(o200k):
    grammar = llg_rs.LLMatcher.grammar_from_json_schema(SCHEMA)
    h = llg_rs.CancellationHandle()
    h.cancel()
    m = llg_rs.LLMatcher(o200k, grammar, cancellation=h)
    assert m.is_error() and "operation cancelled" in m.get_error()
    m = llg_rs.LLMatcher(o200k, grammar, compile_deadline_ms=0)
    assert m.is_error() and "compile deadline of 0 ms exceeded" in m.get_error()
    h = llg_rs.CancellationHandle()
    m = llg_rs.LLMatcher(o200k, grammar, cancellation=h, compile_deadline_ms=60_000)
    assert not m.is_error(), m.get_error()
    assert bits(m.compute_bitmask())
    h.cancel()  # the compile's handle controls the matcher
    assert m.is_cancelled() and bits(m.compute_bitmask()) == []


def test_another_thread_cancels_while_masks_are_computed(o200k):
    # Fresh grammars (cold first masks: milliseconds each), masks in a loop on a worker
    # thread; the main thread cancels. Every mask is whole or empty, never an exception.
    results = []
    for i in range(3):
        g = llg_rs.LLMatcher.grammar_from_json_schema(
            '{"type": "object", "properties": {"k%d": {"type": "string", "format": "email"}}}' % i
        )
        m = llg_rs.LLMatcher(o200k, g)
        h = m.cancellation_handle()
        ref = llg_rs.LLMatcher(o200k, g)
        started = threading.Event()

        def work():
            started.set()
            out = []
            for t in o200k.tokenize_str('{"k%d": "someone@' % i):
                out.append(bits(m.compute_bitmask()))
                if not m.consume_token(t):
                    break
            results.append(out)

        w = threading.Thread(target=work)
        w.start()
        started.wait()
        h.cancel()
        w.join()
        masks = results[-1]
        for k, mask in enumerate(masks):
            if mask:
                # Whole: the reference's mask at the same position.
                r = llg_rs.LLMatcher(o200k, g)
                r.consume_tokens(o200k.tokenize_str('{"k%d": "someone@' % i)[:k])
                assert mask == bits(r.compute_bitmask())
        assert m.is_cancelled() and m.stop_reason() == "Cancelled"
        assert not ref.is_cancelled()
