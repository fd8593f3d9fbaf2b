"""The opt-in `llguidance` shim (python/compat): when installed, the import name `llguidance`
and its submodules resolve to llg_rs. Skipped (with a message) when it is not installed, or
when `llguidance` is the real LLGuidance package."""

import importlib

import pytest

import llg_rs


def _shim():
    try:
        mod = importlib.import_module("llguidance")
    except ImportError:
        pytest.skip("the llguidance shim (python/compat) is not installed")
    if getattr(mod, "LLMatcher", None) is not llg_rs.LLMatcher:
        pytest.skip("`llguidance` is not the shim (the real LLGuidance package?)")
    return mod


def test_names_resolve_to_llg_rs():
    mod = _shim()
    assert mod.LLTokenizer is llg_rs.LLTokenizer
    for sub in ["hf", "numpy", "torch"]:
        try:
            ours = importlib.import_module(f"llg_rs.{sub}")
        except ImportError as e:  # torch or transformers not installed
            print(f"llguidance.{sub} not checked: {e}")
            continue
        m = importlib.import_module(f"llguidance.{sub}")
        public = [n for n in dir(ours) if not n.startswith("_") and callable(getattr(ours, n))]
        for name in public:
            assert hasattr(m, name), f"llguidance.{sub}.{name}"


def test_a_matcher_through_the_shim(o200k):
    mod = _shim()
    m = mod.LLMatcher(o200k, mod.LLMatcher.grammar_from_regex("[0-9]+"))
    assert not m.is_error()
    assert m.consume_tokens(o200k.tokenize_str("42"))
    assert m.is_accepting()
