"""Shared pieces of the vLLM and SGLang drivers: the tokenizer, the requests, the
transcript (every call, every mask row), and the deterministic sampler (record / replay).

The drivers run twice: once with the real ``llguidance`` wheel (``--mode record``: the
sampler picks tokens and drafts from the masks), once with ``llguidance`` resolving to
llg_rs (``PYTHONPATH=python/compat/src``, ``--mode replay --replay A.json``: the same
tokens and drafts as the first run, so the two transcripts line up call by call).
"""

import base64
import glob
import hashlib
import json
import os
import random
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.normpath(os.path.join(REPO, "..", "shared"))
DEFAULT_TOKENIZER = os.path.join(SHARED, "tokenizers", "llama3.tokenizer.json")
MASKBENCH = os.path.join(SHARED, "data", "maskbench")
DEFAULT_EOS = "<|eot_id|>"

IDS_MAX = 400  # rows allowing at most this many tokens are stored as id lists


# ------------------------------------------------------------------ tokenizer


def load_hf_tokenizer(path=DEFAULT_TOKENIZER, eos=DEFAULT_EOS):
    """A transformers fast tokenizer from a tokenizer.json (offline)."""
    import transformers

    return transformers.PreTrainedTokenizerFast(tokenizer_file=path, eos_token=eos)


def _byte_decoder():
    # GPT-2's byte <-> printable-unicode table, inverted (byte-level BPE token strings).
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    codes = list(keep)
    extra = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            codes.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(keep, codes)}


class TokenBytes:
    """Exact bytes of each token id of a byte-level BPE tokenizer (for classification)."""

    def __init__(self, hf_tok):
        self.tok = hf_tok
        self.dec = _byte_decoder()
        self.special = set(hf_tok.all_special_ids) | {
            i for i, t in hf_tok.added_tokens_decoder.items() if t.special
        }
        self.cache = {}

    def __call__(self, tid):
        b = self.cache.get(tid)
        if b is None:
            s = self.tok.convert_ids_to_tokens(int(tid))
            if s is None:
                b = b""
            elif tid in self.special:
                b = s.encode()
            else:
                try:
                    b = bytes(self.dec[c] for c in s)
                except KeyError:
                    b = s.encode()
            self.cache[tid] = b
        return b

    def text(self, ids):
        return b"".join(self(t) for t in ids).decode("utf-8", "replace")


# ------------------------------------------------------------------ requests

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    },
    "required": ["name", "age"],
}
INT_BOUNDS = {
    "type": "object",
    "properties": {
        "t": {"type": "integer", "minimum": -20, "maximum": 20},
        "u": {"type": "integer", "minimum": -5},
    },
    "required": ["t", "u"],
}
NESTED = {
    "type": "object",
    "properties": {
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "loc": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "required": ["lat", "lon"],
        },
    },
    "required": ["unit", "loc"],
}
LARK_SQL = r"""
start: "SELECT " cols " FROM " NAME (" WHERE " cond)? ";"
cols: NAME (", " NAME)*
cond: NAME " " OP " " NUMBER
OP: ">" | "<" | "="
NAME: /[a-z_]+/
NUMBER: /[0-9]+/
"""
LARK_JSON = 'start: "Result: " obj\nobj: %json {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}\n'
GBNF_GREET = 'root ::= greeting " " name "!"\ngreeting ::= "hello" | "hi"\nname ::= [A-Z] [a-z]*\n'
GBNF_LIST = 'root ::= "[" item ("," item)* "]"\nitem ::= [0-9]+\n'
STAG = {
    "structures": [
        {
            "begin": "<function=get_weather>",
            "schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            "end": "</function>",
        },
        {
            "begin": "<function=get_time>",
            "schema": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]},
            "end": "</function>",
        },
    ],
    "triggers": ["<function="],
}


def hand_requests():
    """(id, kind, spec, planned text or None for an invalid grammar). Kinds: json,
    json_object, regex, choice, lark, gbnf, structural_tag."""
    return [
        ("json-person", "json", PERSON, '{"name": "Ada Lovelace", "age": 36, "tags": ["math", "poetry"]}'),
        ("json-int-bounds", "json", INT_BOUNDS, '{"t": -7, "u": -3}'),
        ("json-nested", "json", NESTED, '{"unit": "celsius", "loc": {"lat": 48.85, "lon": 2.35}}'),
        ("json-object", "json_object", None, '{"city": "Paris", "n": [1, 2.5, null, true], "s": "caf\\u00e9"}'),
        ("json-object-key-escape", "json_object", None, '{"a\\/b": 1, "\\u0041": 2}'),
        ("json-key-escape-props", "json", PERSON, '{"name": "A", "age": 1, "x\\/y": 2, "\\u0041": 3}'),
        ("regex-id", "regex", r"[A-Z]{3}-\d{4}(-[a-z]{2})?", "ABC-1234-xy"),
        ("regex-email", "regex", r"[a-z0-9._]+@[a-z]+\.(com|org)", "ada.l@example.org"),
        ("choice", "choice", ["red", "green", "blue", "dark green"], "dark green"),
        ("lark-sql", "lark", LARK_SQL, "SELECT name, age FROM users WHERE age > 30;"),
        ("lark-json", "lark", LARK_JSON, 'Result: {"ok": true}'),
        ("gbnf-greet", "gbnf", GBNF_GREET, "hello Bob!"),
        ("gbnf-list", "gbnf", GBNF_LIST, "[1,22,333]"),
        ("stag-weather", "structural_tag", STAG, 'Let me check. <function=get_weather>{"city": "Paris"}</function>'),
        ("bad-regex", "regex", "(abc", None),
        ("bad-lark", "lark", "start: foo\n", None),
        ("bad-json-type", "json", {"type": "strnig"}, None),
        ("bad-json-bounds", "json", {"type": "integer", "minimum": 5, "maximum": 2}, None),
        ("bad-gbnf", "gbnf", 'root ::= "a" ( "b"\n', None),
    ]


def maskbench_requests(n, seed=7, folder=MASKBENCH):
    """n MaskBench schemas (seeded shuffle) with their first valid instance as text."""
    files = sorted(glob.glob(os.path.join(folder, "*.json")))
    random.Random(seed).shuffle(files)
    out = []
    for f in files:
        if len(out) >= n:
            break
        try:
            with open(f) as fh:
                d = json.load(fh)
        except Exception:  # noqa: BLE001
            continue
        valid = [t for t in d.get("tests", []) if t.get("valid")]
        if not valid or not isinstance(d.get("schema"), dict):
            continue
        name = os.path.splitext(os.path.basename(f))[0]
        out.append(("mb-" + name, "json", d["schema"], json.dumps(valid[0]["data"])))
    return out


# ------------------------------------------------------------------ masks


def row_bits(row):
    """A bitmask row (torch or numpy int32) as a numpy bool array of token ids."""
    a = row.numpy() if hasattr(row, "numpy") else np.asarray(row)
    b = np.ascontiguousarray(a).astype("<i4").tobytes()
    return np.unpackbits(np.frombuffer(b, np.uint8), bitorder="little").astype(bool)


def encode_row(row):
    a = row.numpy() if hasattr(row, "numpy") else np.asarray(row)
    b = np.ascontiguousarray(a).astype("<i4").tobytes()
    bits = np.unpackbits(np.frombuffer(b, np.uint8), bitorder="little")
    n = int(bits.sum())
    enc = {"n": n, "h": hashlib.sha1(b).hexdigest()[:16]}
    if n <= IDS_MAX:
        enc["ids"] = np.flatnonzero(bits).tolist()
    else:
        import zlib

        enc["z"] = base64.b64encode(zlib.compress(b, 6)).decode()
    return enc


def decode_row(enc, nbits):
    """An encoded row back to a numpy bool array of nbits."""
    out = np.zeros(nbits, dtype=bool)
    if "ids" in enc:
        out[enc["ids"]] = True
        return out
    import zlib

    b = zlib.decompress(base64.b64decode(enc["z"]))
    bits = np.unpackbits(np.frombuffer(b, np.uint8), bitorder="little").astype(bool)
    out[: min(nbits, len(bits))] = bits[:nbits]
    return out


# ------------------------------------------------------------------ transcript


def engine_info():
    import llguidance

    return {
        "engine": getattr(llguidance, "__engine__", "llguidance-wheel"),
        "llguidance_version": getattr(llguidance, "__version__", "?"),
        "llguidance_file": llguidance.__file__,
        "llg_rs_version": getattr(llguidance, "__llg_rs_version__", None),
    }


class Transcript:
    """Events in call order; each has the request id (``_`` for backend-wide calls), a
    per-request sequence number, the call, its arguments and its result."""

    def __init__(self, driver, meta):
        self.data = {"driver": driver, "meta": meta, "events": []}
        self.seq = {}

    def add(self, rid, op, args=None, ret=None, **extra):
        n = self.seq.get(rid, 0)
        self.seq[rid] = n + 1
        ev = {"rid": rid, "seq": n, "op": op}
        if args is not None:
            ev["args"] = args
        if ret is not None:
            ev["ret"] = ret
        ev.update(extra)
        self.data["events"].append(ev)
        return ev

    def save(self, path):
        self.data["meta"]["saved_at"] = time.strftime("%Y-%m-%d %H:%M:%S")
        with open(path, "w") as fh:
            json.dump(self.data, fh)
        return path


# ------------------------------------------------------------------ sampler


class Sampler:
    """Decides drafts and sampled tokens. ``record``: from the masks (the planned text's
    canonical tokens while the mask allows them, then a seeded RNG over the allowed ids);
    ``replay``: the decisions of an earlier transcript, for the same (request, step)."""

    def __init__(self, mode, seed, eos, hf_tok, replay_path=None):
        self.mode = mode
        self.seed = seed
        self.eos = eos
        self.tok = hf_tok
        self.decisions = {}
        if mode == "replay":
            with open(replay_path) as fh:
                data = json.load(fh)
            for ev in data["events"]:
                if ev["op"] == "decision":
                    self.decisions[(ev["rid"], ev["args"]["step"])] = ev["ret"]

    def rng(self, rid, step, salt):
        h = hashlib.sha256(f"{self.seed}/{rid}/{step}/{salt}".encode()).digest()
        return random.Random(int.from_bytes(h[:8], "little"))

    def recorded(self, rid, step):
        return self.decisions.get((rid, step))

    def pick(self, st, step, i, bits):
        """The token the "model" samples at row i of this step (record mode)."""
        pos = len(st["out"]) + i
        if st["on_plan"] and pos < len(st["plan"]):
            t = st["plan"][pos]
            if t < len(bits) and bits[t]:
                return t
        st["on_plan"] = False
        allowed = np.flatnonzero(bits)
        if len(allowed) == 0:
            return self.eos
        r = self.rng(st["rid"], step, f"pick{i}")
        if self.eos < len(bits) and bits[self.eos] and r.random() < 0.3:
            return self.eos
        return int(allowed[r.randrange(len(allowed))])

    def drafts(self, st, step, k):
        """Up to k draft tokens (record mode): the planned tokens, sometimes one replaced by
        a random id (usually invalid) or the first byte of the planned token (valid but not
        what the model picks), sometimes none."""
        if not st["on_plan"] or k == 0:
            return []
        pos = len(st["out"])
        nxt = st["plan"][pos : pos + k]
        if not nxt:
            return []
        r = self.rng(st["rid"], step, "draft")
        x = r.random()
        if x < 0.5:
            return list(nxt)
        if x < 0.7:
            d = list(nxt)
            d[-1] = r.randrange(len(self.tok))
            return d
        if x < 0.85:
            s = self.tok.convert_ids_to_tokens(nxt[0])
            if s and len(s) > 1 and nxt[0] != self.eos:
                b = self.tok.convert_tokens_to_ids(s[0])
                if isinstance(b, int) and b >= 0:
                    return [b]
            return list(nxt[:1])
        return []


def new_state(rid, text, hf_tok, eos):
    plan = hf_tok.encode(text, add_special_tokens=False) + [eos] if text is not None else []
    return {"rid": rid, "plan": plan, "out": [], "on_plan": True, "done": None}
