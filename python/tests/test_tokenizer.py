import pytest

import llg_rs
from llg_rs import LLTokenizer


def test_byte_tokenizer(byte_tok):
    t = byte_tok
    assert t.vocab_size == 262
    assert t.eos_token == 261 and t.eos_tokens == [261]
    assert t.is_canonical
    assert t.tokenize_str("hi") == [104, 105]
    assert t.tokenize_bytes(b"\xff\xfe") == [255, 254]
    assert t.decode_bytes([104, 105, 261]) == b"hi<|end|>"
    assert t.decode_str([0xC3]) == "\ufffd"
    assert t.is_special_token(256) and not t.is_special_token(97)
    assert not t.is_special_token(100000) and not t.is_special_token(-1)
    assert t.greedy_tokenize("ab") == [97, 98]


def test_dbg_tokens(byte_tok):
    assert byte_tok.dbg_tokens([104, 105, 10, 0, 255, 32]) == "⟦h‧i‧\\n‧\\0‧≺HEX[ff]≻‧ ⟧"
    assert byte_tok.dbg_tokens([261, 256]) == "⟦≺EOS≻‧<|tool|>⟧"
    assert byte_tok.test_trace_tokens([104, 105]) == "h‧i"
    assert byte_tok.dbg_tokens([100000]) == "⟦≺OOB[100000]≻⟧"
    assert byte_tok.dbg_tokens([34, 92, 9, 13, 127, 200]) == "⟦\"‧\\‧\\t‧\\r‧\\u{7f}‧≺HEX[c8]≻⟧"
    assert byte_tok.test_trace_tokens([104, 10, 0]) == "h‧\n‧\\0"
    long = byte_tok.dbg_tokens(list(range(256)))
    assert long.startswith("⟦…8‧9‧:") and long.count("‧") == 199
    assert repr(byte_tok) == 'LLTokenizer("byte", vocab_size=262, eos_tokens=[261])'


def test_tokenize_partial(byte_tok, o200k):
    toks, rest = byte_tok.tokenize_partial(b"abc")
    assert byte_tok.decode_bytes(toks) + rest == b"abc"
    text = b"hello world, this is a tes"
    toks, rest = o200k.tokenize_partial(text)
    assert o200k.decode_bytes(toks) + rest == text
    # The kept tokens do not change whatever follows.
    for more in [b"t", b"ting", b" x", b"!"]:
        assert o200k.tokenize_bytes(text + more)[: len(toks)] == toks
    assert rest  # the unfinished word is held back


def test_o200k(o200k):
    assert o200k.vocab_size > 200000
    ids = o200k.tokenize_str("Hello, world!")
    assert o200k.decode_str(ids) == "Hello, world!"
    assert len(ids) == 4
    end = o200k.tokenize_str("<|endoftext|>", parse_special=True)
    assert len(end) == 1 and o200k.is_special_token(end[0])
    assert len(o200k.tokenize_str("<|endoftext|>")) > 1


def test_overrides():
    t = LLTokenizer("byte", n_vocab=300, eos_token=[5, 6])
    assert t.vocab_size == 300
    assert t.eos_tokens == [5, 6] and t.eos_token == 5
    with pytest.raises(ValueError, match="must not be empty"):
        LLTokenizer("byte", eos_token=[])
    with pytest.raises(ValueError, match="out of range"):
        LLTokenizer("byte", eos_token=1000)


def test_load_errors(tmp_path):
    with pytest.raises(ValueError, match="error loading tokenizer"):
        LLTokenizer("nonexistent-name")
    with pytest.raises(ValueError, match="error loading tokenizer"):
        LLTokenizer(str(tmp_path / "no-such" / "tokenizer.json"))
    for bad in [123, None, object()]:
        with pytest.raises(ValueError, match="Expecting a TokenizerWrapper"):
            LLTokenizer(bad)


def test_tokenizer_json_text(tmp_path):
    # A small BPE tokenizer.json: what llg_rs.hf.from_tokenizer passes.
    import json

    vocab = {c: i for i, c in enumerate("abcdefgh")}
    vocab["ab"] = 8
    doc = {
        "version": "1.0",
        "added_tokens": [{"id": 9, "content": "</s>", "special": True, "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False}],
        "normalizer": None,
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": None,
        "model": {"type": "BPE", "vocab": vocab, "merges": ["a b"], "dropout": None,
                  "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False},
    }
    text = json.dumps(doc)
    t = LLTokenizer(text, eos_token=9)
    assert t.vocab_size == 10 and t.eos_token == 9
    assert t.tokenize_str("abc") == [8, 2]
    p = tmp_path / "tokenizer.json"
    p.write_text(text)
    assert LLTokenizer(str(p), eos_token=9).tokenize_str("abc") == [8, 2]


class _Greedy:
    """A tokenizer object of the shape LLGuidance's TokenizerWrapper wraps."""

    def __init__(self):
        self.tokens = [b"a", b"b", b"<eos>", b"ab", b"c", b" "]
        self.eos_token_id = 2
        self.bos_token_id = None
        self.special_token_ids = [2]
        self.calls = []

    def __call__(self, s):
        self.calls.append(s)
        out, i = [], 0
        data = s.encode() if isinstance(s, str) else s
        while i < len(data):
            for tid in (3, 0, 1, 4, 5):
                tb = self.tokens[tid]
                if data.startswith(tb, i):
                    out.append(tid)
                    i += len(tb)
                    break
            else:
                raise ValueError("no token")
        return out


def test_wrapper():
    g = _Greedy()
    t = LLTokenizer(llg_rs.TokenizerWrapper(g))
    assert t.vocab_size == 6 and t.eos_token == 2
    assert t.is_special_token(2) and not t.is_special_token(0)
    assert t.tokenize_str("abc") == [3, 4]
    assert g.calls[-1] == "abc"  # it cannot tokenize b"test", so it is given text
    m = llg_rs.LLMatcher(t, 'start: "ab" "c"')
    assert m.consume_tokens([3, 4]) and m.is_accepting()


def test_slices(byte_tok):
    assert LLTokenizer.general_slices()[0] == r"[\x20\x0A\x0D\x09]+"
    assert len(LLTokenizer.json_slices()) >= 2
    t2 = byte_tok.with_slices([])
    t3 = byte_tok.with_slices(LLTokenizer.general_slices())
    g = llg_rs.LLMatcher.grammar_from_json_schema({"type": "string"})
    masks = []
    for t in (byte_tok, t2, t3):
        m = llg_rs.LLMatcher(t, g)
        m.consume_tokens(t.tokenize_str('"ab'))
        masks.append(m.compute_bitmask())
    assert masks[0] == masks[1] == masks[2]
    with pytest.raises(ValueError, match="slice"):
        byte_tok.with_slices(["abc"])


def test_from_tiktoken_parts():
    # A tiny byte-level BPE: the 256 bytes, then "ab" (rank 256); one special token.
    enc = {bytes([i]): i for i in range(256)}
    enc[b"ab"] = 256
    t = LLTokenizer.from_tiktoken(enc, {"<|eot|>": 257}, r"\w+|\s+|[^\w\s]+", eos_token=257)
    assert t.vocab_size == 258 and t.eos_token == 257
    assert t.tokenize_str("abc ab") == [256, 99, 32, 256]
    assert t.is_special_token(257)


def test_tiktoken_module(o200k):
    tiktoken = pytest.importorskip("tiktoken", reason="tiktoken not installed: pip install tiktoken")
    import llg_rs.tiktoken

    # An Encoding built here (no download): o200k's ranks with GPT-2's pre-tokenizer.
    n = 199998
    ranks = {o200k.decode_bytes([i]): i for i in range(n)}
    pat = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    enc = tiktoken.Encoding("test", pat_str=pat, mergeable_ranks=ranks,
                            special_tokens={"<|endoftext|>": n, "<|endofprompt|>": n + 1})
    t = llg_rs.tiktoken.lltokenizer_from_encoding(enc)
    assert t.eos_token == enc.eot_token == n
    for s in ["Hello, world!", "  x = [1, 2]\n", "日本語 text", "don't  stop"]:
        assert t.tokenize_str(s) == enc.encode_ordinary(s), s
