"""llg_rs.hf: LLTokenizers from transformers fast tokenizers, and the LogitsProcessor that
constrains ``model.generate`` (skipped when transformers or torch is not installed).

Everything is built locally: two tiny tokenizers trained with the ``tokenizers`` library on a
few sentences, and a tiny randomly initialised Llama model. Nothing is downloaded.
"""

import json

import pytest

_INSTALL = "pip install torch transformers (see python/README.md)"
torch = pytest.importorskip("torch", reason=f"torch not installed: {_INSTALL}")
transformers = pytest.importorskip("transformers", reason=f"transformers not installed: {_INSTALL}")
tokenizers = pytest.importorskip("tokenizers", reason=f"tokenizers not installed: {_INSTALL}")

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402

import llg_rs  # noqa: E402
import llg_rs.hf  # noqa: E402
from llg_rs import LLMatcher  # noqa: E402

from conftest import bits  # noqa: E402

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello, world! Hello again, world.",
    '{"name": "Alice", "age": 30, "ok": true}',
    '{"ok": false, "items": [1, 2, 3], "tag": "x"}',
    "Constrained decoding keeps the model inside the grammar.",
    "naïve café — ünïcödé 東京 🙂",
] * 5

TEXTS = [
    "Hello, world!",
    "hello world",
    "The lazy dog",
    "ünïcödé 東京 🙂",
    "xyzzy QQQ",  # 'Q' never occurs in the corpus: byte tokens / byte fallback
    '{"ok": true}',
    "a\nb  c\t d",
]

OK_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
SMALL_SCHEMA = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean"},
        "n": {"type": "integer", "minimum": 0, "maximum": 99},
        "tag": {"type": "string", "maxLength": 3},
    },
    "required": ["ok", "n", "tag"],
    "additionalProperties": False,
}


def byte_level_bpe() -> "transformers.PreTrainedTokenizerFast":
    """A GPT-2 style byte-level BPE (all 256 bytes in the base alphabet)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        min_frequency=1,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>")


def sentencepiece_bpe(style: str) -> "transformers.PreTrainedTokenizerFast":
    """A SentencePiece-style BPE with byte fallback: ``<unk> <s> </s>`` at ids 0..2 and the
    byte tokens ``<0x00>``..``<0xFF>`` at ids 3..258 in the model's vocabulary (as in
    Llama-2 / Mistral), then the trained pieces (``▁`` for spaces).

    ``style="llama2"``: the Llama-2/Mistral ``tokenizer.json`` layout (``Prepend ▁`` +
    ``Replace " "→▁`` normalizer, no pre-tokenizer, Replace/ByteFallback/Fuse/Strip decoder);
    ``style="metaspace"``: a ``Metaspace`` pre-tokenizer (``prepend_scheme="first"``).
    """
    specials = ["<unk>", "<s>", "</s>"]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=300, min_frequency=1, special_tokens=specials, show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    j = json.loads(tok.to_str())
    trained = sorted(j["model"]["vocab"].items(), key=lambda kv: kv[1])
    vocab = {s: i for i, s in enumerate(specials)}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for s, _ in trained:
        if s not in vocab:
            vocab[s] = len(vocab)
    j["model"]["vocab"] = vocab
    j["model"]["byte_fallback"] = True
    j["model"]["fuse_unk"] = True
    j["added_tokens"] = [dict(a, id=vocab[a["content"]]) for a in j["added_tokens"]]
    if style == "metaspace":
        j["decoder"] = {
            "type": "Sequence",
            "decoders": [
                {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True},
                {"type": "ByteFallback"},
                {"type": "Fuse"},
            ],
        }
    else:
        assert style == "llama2"
        j["normalizer"] = {
            "type": "Sequence",
            "normalizers": [
                {"type": "Prepend", "prepend": "▁"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
            ],
        }
        j["pre_tokenizer"] = None
        j["decoder"] = {
            "type": "Sequence",
            "decoders": [
                {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                {"type": "ByteFallback"},
                {"type": "Fuse"},
                {"type": "Strip", "content": " ", "start": 1, "stop": 0},
            ],
        }
    built = Tokenizer.from_str(json.dumps(j))
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=built, eos_token="</s>", bos_token="<s>", unk_token="<unk>"
    )


@pytest.fixture(scope="module")
def bpe_hf():
    return byte_level_bpe()


@pytest.fixture(scope="module", params=["llama2", "metaspace"])
def sp_hf(request):
    return request.param, sentencepiece_bpe(request.param)


# ---------------------------------------------------------------------------------------
# from_tokenizer


def test_byte_level_bpe(bpe_hf):
    h = bpe_hf
    ll = llg_rs.hf.from_tokenizer(h)
    assert isinstance(ll, llg_rs.LLTokenizer)
    assert ll.vocab_size == len(h) == h.vocab_size
    assert ll.eos_token == h.eos_token_id == h.convert_tokens_to_ids("<|endoftext|>")
    assert ll.eos_tokens == [h.eos_token_id]
    assert ll.is_special_token(h.eos_token_id)
    for text in TEXTS + [" leading space", "  two", "trailing "]:
        ids = h.encode(text, add_special_tokens=False)
        assert ll.tokenize_str(text) == ids, text
        assert ll.decode_str(ids) == h.decode(ids) == text
    # Every byte of the base alphabet is one token.
    assert all(len(ll.tokenize_bytes(bytes([b]))) == 1 for b in range(256))


def test_sentencepiece_bpe(sp_hf):
    style, h = sp_hf
    ll = llg_rs.hf.from_tokenizer(h)
    assert ll.vocab_size == len(h) == h.vocab_size
    assert ll.eos_token == h.eos_token_id == 2
    assert ll.is_special_token(0) and ll.is_special_token(1) and ll.is_special_token(2)
    # Byte-fallback tokens are the single bytes, not special tokens.
    q = h.convert_tokens_to_ids("<0x51>")
    assert q == 3 + 0x51 and not ll.is_special_token(q)
    assert ll.decode_bytes([q]) == b"Q"
    space = h.convert_tokens_to_ids("▁")
    assert ll.decode_bytes([space]) == b" "
    for text in TEXTS:
        ids = h.encode(text, add_special_tokens=False)
        # LLTokenizer drops the SentencePiece dummy prefix (the Prepend-▁ normalizer, or
        # Metaspace's prepend), as LLGuidance does: a constrained generation continues a
        # prompt, so its first token must not get an extra space. HF's ids are therefore
        # those of " " + text, and decoding them with LLTokenizer shows that space.
        assert ll.tokenize_str(" " + text) == ids, text
        assert ll.decode_str(ids) == " " + text
        assert h.decode(ids) == text
        mine = ll.tokenize_str(text)
        assert ll.decode_str(mine) == text
        assert h.decode(mine) == text
        assert mine != ids  # only the dummy prefix differs
    # A text that already starts with a space: Prepend adds a second ▁ (llama2 layout),
    # Metaspace with prepend_scheme="first" does not.
    ids = h.encode(" lazy", add_special_tokens=False)
    if style == "llama2":
        assert ll.tokenize_str("  lazy") == ids
    else:
        assert ll.tokenize_str(" lazy") == ids


def test_from_tokenizer_options(bpe_hf):
    h = bpe_hf
    n = len(h)
    padded = llg_rs.hf.from_tokenizer(h, n_vocab=n + 60)
    assert padded.vocab_size == n + 60
    assert padded.tokenize_str("Hello, world!") == h.encode("Hello, world!", add_special_tokens=False)
    two = llg_rs.hf.from_tokenizer(h, eos_token=[h.eos_token_id, 5])
    assert two.eos_tokens == [h.eos_token_id, 5]
    assert llg_rs.hf.from_tokenizer(h, slices=[]).slices == []
    # The matcher's mask has the padded width; padded ids are never allowed.
    m = LLMatcher(padded, LLMatcher.grammar_from_json_schema(OK_SCHEMA))
    assert m.vocab_size == n + 60
    assert len(m.compute_bitmask()) == 4 * ((n + 60 + 31) // 32)
    assert max(bits(m.compute_bitmask())) < n


def test_from_tokenizer_added_tokens_and_padding():
    h = byte_level_bpe()
    h.add_special_tokens({"additional_special_tokens": ["<|tool|>"]})
    tool = h.convert_tokens_to_ids("<|tool|>")
    assert len(h) == h.vocab_size + 1 and tool == h.vocab_size
    h.backend_tokenizer.enable_padding(length=50)
    h.backend_tokenizer.enable_truncation(max_length=40)
    ll = llg_rs.hf.from_tokenizer(h)
    # The caller's tokenizer keeps its padding and truncation (from_tokenizer works on a
    # copy; h.encode() below resets them itself, so check before it).
    assert h.backend_tokenizer.padding["length"] == 50
    assert h.backend_tokenizer.truncation["max_length"] == 40
    assert ll.vocab_size == len(h)
    assert ll.is_special_token(tool)
    assert ll.tokenize_str("a<|tool|>b", parse_special=True) == h.encode("a<|tool|>b", add_special_tokens=False)
    assert tool not in ll.tokenize_str("a<|tool|>b")


def test_from_tokenizer_rejects_slow_tokenizers(bpe_hf):
    with pytest.raises(ValueError, match="Only fast tokenizers are supported"):
        llg_rs.hf.from_tokenizer(bpe_hf.backend_tokenizer)  # a tokenizers.Tokenizer
    with pytest.raises(ValueError, match="Only fast tokenizers are supported"):
        llg_rs.hf.from_tokenizer(object())
    slow_cls = getattr(transformers, "ByT5Tokenizer", None)  # a slow (pure Python) tokenizer
    if slow_cls is None:
        pytest.skip("transformers has no ByT5Tokenizer")
    slow = slow_cls()
    assert not isinstance(slow, transformers.PreTrainedTokenizerFast)
    with pytest.raises(ValueError, match="Only fast tokenizers are supported"):
        llg_rs.hf.from_tokenizer(slow)


# ---------------------------------------------------------------------------------------
# LogitsProcessor with model.generate


def tiny_llama(vocab_size: int, eos: int, seed: int):
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=256,
        bos_token_id=eos,
        eos_token_id=eos,
        pad_token_id=eos,
    )
    return transformers.LlamaForCausalLM(cfg).eval()


def compact_json_matcher(ll, schema):
    # Compact JSON (no flexible whitespace): a random model samples nearly uniformly among
    # the allowed tokens and would otherwise spend most steps on whitespace.
    grammar = LLMatcher.grammar_from_json_schema(schema, overrides={"whitespace_flexible": False})
    m = LLMatcher(ll, grammar)
    assert not m.is_error(), m.get_error()
    return m


def generate(model, h, procs, prompt: str, seed: int, batch: int = 1, **kw):
    ids = torch.tensor([h.encode(prompt, add_special_tokens=False)] * batch)
    torch.manual_seed(seed)
    with torch.no_grad():
        out = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            logits_processor=transformers.LogitsProcessorList(procs),
            max_new_tokens=kw.pop("max_new_tokens", 60),
            do_sample=kw.pop("do_sample", True),
            eos_token_id=h.eos_token_id,
            pad_token_id=h.eos_token_id,
            **kw,
        )
    return [row[ids.shape[1]:].tolist() for row in out]


def strip_eos(new, eos):
    assert eos in new, f"generation did not end with EOS: {new}"
    k = new.index(eos)
    assert all(t == eos for t in new[k:])  # only EOS (padding) after the first EOS
    return new[:k]


def check_small(doc):
    assert set(doc) == {"ok", "n", "tag"}
    assert isinstance(doc["ok"], bool)
    assert isinstance(doc["n"], int) and not isinstance(doc["n"], bool) and 0 <= doc["n"] <= 99
    assert isinstance(doc["tag"], str) and len(doc["tag"]) <= 3


@pytest.mark.parametrize("which", ["bpe", "sp"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generate_json(which, seed, bpe_hf):
    h = bpe_hf if which == "bpe" else sentencepiece_bpe("llama2")
    ll = llg_rs.hf.from_tokenizer(h)
    model = tiny_llama(ll.vocab_size, h.eos_token_id, seed)
    assert model.config.vocab_size == ll.vocab_size == len(h)
    for schema, check in [
        (OK_SCHEMA, lambda d: set(d) == {"ok"} and isinstance(d["ok"], bool)),
        (SMALL_SCHEMA, check_small),
    ]:
        m = compact_json_matcher(ll, schema)
        proc = llg_rs.hf.LogitsProcessor(m)
        (new,) = generate(model, h, [proc], "JSON:", seed)
        body = strip_eos(new, h.eos_token_id)
        text = h.decode(body)
        assert ll.decode_str(body) == text
        doc = json.loads(text)
        assert check(doc) is not False, doc
        assert m.is_accepting() and not m.is_error()


def test_generate_unconstrained_is_not_json(bpe_hf):
    # Sanity check of the set-up: without the processor, the random model's output is noise.
    h = bpe_hf
    model = tiny_llama(len(h), h.eos_token_id, 0)
    (new,) = generate(model, h, [], "JSON:", 0, max_new_tokens=30)
    with pytest.raises(ValueError):
        json.loads(h.decode(strip_eos(new + [h.eos_token_id], h.eos_token_id)))


def test_generate_greedy_and_padded_vocab(bpe_hf):
    # A model whose logits are wider than the tokenizer (as most real models are): the
    # extra ids are masked, with and without n_vocab.
    h = bpe_hf
    width = len(h) + 45
    model = tiny_llama(width, h.eos_token_id, 3)
    for ll in [llg_rs.hf.from_tokenizer(h, n_vocab=width), llg_rs.hf.from_tokenizer(h)]:
        m = compact_json_matcher(ll, OK_SCHEMA)
        (new,) = generate(model, h, [llg_rs.hf.LogitsProcessor(m)], "JSON:", 0, do_sample=False)
        body = strip_eos(new, h.eos_token_id)
        assert max(body) < len(h)
        assert json.loads(h.decode(body)) in ({"ok": True}, {"ok": False})


def test_generate_batch(bpe_hf):
    # One matcher per row; rows end at different steps (padding follows EOS).
    h = bpe_hf
    ll = llg_rs.hf.from_tokenizer(h)
    model = tiny_llama(ll.vocab_size, h.eos_token_id, 4)
    matchers = [compact_json_matcher(ll, OK_SCHEMA), compact_json_matcher(ll, SMALL_SCHEMA)]
    out = generate(model, h, [llg_rs.hf.LogitsProcessor(matchers)], "JSON:", 4, batch=2, max_new_tokens=80)
    docs = [json.loads(h.decode(strip_eos(new, h.eos_token_id))) for new in out]
    assert set(docs[0]) == {"ok"}
    check_small(docs[1])
    assert all(m.is_accepting() and not m.is_error() for m in matchers)


def test_logits_processor_direct(bpe_hf):
    h = bpe_hf
    ll = llg_rs.hf.from_tokenizer(h)
    m = LLMatcher(ll, 'start: "true" | "false"')
    proc = llg_rs.hf.LogitsProcessor(m)
    assert proc.matchers == [m]
    prompt = torch.tensor([[5, 6, 7]])
    scores = torch.zeros((1, ll.vocab_size))
    out = proc(prompt, scores)
    assert out is scores  # in place
    allowed = torch.isfinite(scores[0]).nonzero().flatten().tolist()
    assert allowed == bits(m.compute_bitmask())
    # The prompt is not consumed; each later call consumes the tokens added since.
    t = h.encode("false", add_special_tokens=False)
    assert t[0] in allowed
    for i in range(1, len(t) + 1):
        scores = torch.zeros((1, ll.vocab_size))
        proc(torch.tensor([[5, 6, 7] + t[:i]]), scores)
        allowed = torch.isfinite(scores[0]).nonzero().flatten().tolist()
        if i < len(t):
            assert t[i] in allowed
    assert m.is_accepting()
    assert allowed == [h.eos_token_id]
    # After EOS (and the padding generate() adds after it), only EOS again.
    scores = torch.zeros((1, ll.vocab_size))
    proc(torch.tensor([[5, 6, 7] + t + [h.eos_token_id, h.eos_token_id]]), scores)
    assert torch.isfinite(scores[0]).nonzero().flatten().tolist() == [h.eos_token_id]
    assert m.is_stopped() and not m.is_error()
    with pytest.raises(ValueError, match="2 matchers for a batch of 1"):
        llg_rs.hf.LogitsProcessor([m, m])(prompt, torch.zeros((1, ll.vocab_size)))


def test_logits_processor_reuse(bpe_hf):
    # A processor follows one generate() call; reset() readies it (and its matchers) for
    # the next one, and a reuse without it is refused instead of consuming the new prompt.
    h = bpe_hf
    ll = llg_rs.hf.from_tokenizer(h)
    model = tiny_llama(ll.vocab_size, h.eos_token_id, 5)
    m = compact_json_matcher(ll, OK_SCHEMA)
    proc = llg_rs.hf.LogitsProcessor(m)
    first = generate(model, h, [proc], "A longer prompt, as JSON:", 5)[0]
    assert json.loads(h.decode(strip_eos(first, h.eos_token_id))) in ({"ok": True}, {"ok": False})
    with pytest.raises(ValueError, match="call reset"):
        generate(model, h, [proc], "JSON:", 6)
    proc.reset()
    assert not m.is_stopped() and not m.is_error()
    second = generate(model, h, [proc], "A much, much longer prompt than before, as JSON:", 6)[0]
    assert json.loads(h.decode(strip_eos(second, h.eos_token_id))) in ({"ok": True}, {"ok": False})
    assert not m.is_error()
