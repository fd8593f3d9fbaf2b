"""A process forked after compiles (its compile threads started, the extension's allocator
in use, possibly from several threads) compiles and computes masks in the child. vLLM and
SGLang start worker processes from a parent that may have compiled already; a lock held by
a thread that did not survive the fork would hang the child (the test's alarm fails it)."""

import concurrent.futures
import os
import sys

import pytest

from llg_rs import LLMatcher

from conftest import bits

SCHEMA = '{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}'


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is not available here")
def test_compile_and_mask_after_fork(byte_tok):
    grammar = LLMatcher.grammar_from_json_schema(SCHEMA)
    m = LLMatcher(byte_tok, grammar)
    assert not m.is_error(), m.get_error()
    # Compiles on other threads while the fork happens.
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        busy = [pool.submit(LLMatcher, byte_tok, grammar) for _ in range(16)]
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                import signal

                signal.alarm(20)
                child = LLMatcher(byte_tok, 'start: "x" /[0-9]+/')
                ok = not child.is_error() and bits(child.compute_bitmask()) == [ord("x")]
                again = LLMatcher(byte_tok, grammar)
                ok = ok and not again.is_error() and ord("{") in bits(again.compute_bitmask())
                code = 0 if ok else 1
            finally:
                sys.stdout.flush()
                os._exit(code)
        for f in busy:
            assert not f.result().is_error()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status), f"the child did not exit normally: status {status}"
    assert os.WEXITSTATUS(status) == 0, "the child's compile or mask failed"
