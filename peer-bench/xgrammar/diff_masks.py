#!/usr/bin/env python3
"""Mask-by-mask comparison of our structural tags with XGrammar's, on a byte vocabulary.

Usage: diff_masks.py [--help] [--llg PATH] [--walks N] [--seed S] [CORPUS | DIR]

For each `structural_tag` case of CORPUS (default grammars/tests/data/structural_tag.txt)
with accept lines (or each structural tag `*.json` in DIR, walks only), and for each accept line plus N random walks (printable ASCII
bytes sampled from XGrammar's mask, 60 steps at most), computes the mask before
every byte with XGrammar 0.2.8 (256 byte tokens + EOS 256) and with `llg masks --tokenizer
bytes`, and reports the first step where the two masks differ (which bytes only one of them
allows). Cases with `(ours` in the title are reported but not counted. Exit status 0 when
every compared mask agrees, 1 when some differ, 2 when xgrammar or the llg binary is
missing (build it with `cargo build --release -p llguidance --bin llg`).
"""
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_corpus import cases  # noqa: E402

EOS = 256


def xgr_setup():
    import xgrammar as xgr

    vocab = [bytes([i]) for i in range(256)] + [b"<eos>"]
    info = xgr.TokenizerInfo(vocab, vocab_type=xgr.VocabType.RAW, vocab_size=257, stop_token_ids=[EOS])
    return xgr, xgr.GrammarCompiler(info, max_threads=1)


def xgr_masks(xgr, compiled, seq):
    """The allowed sets before each token of seq (stopping at the first rejected one)."""
    import torch

    m = xgr.GrammarMatcher(compiled)
    bm = xgr.allocate_token_bitmask(1, 257)
    out = []
    for t in seq + [None]:
        m.fill_next_token_bitmask(bm)
        bits = xgr.testing.bitmask_to_bool_mask(bm, 257)[0] if hasattr(xgr, "testing") else None
        allowed = set(torch.nonzero(bits).flatten().tolist())
        out.append(allowed)
        if t is None or t not in allowed or not m.accept_token(t):
            break
    return out


def walk(xgr, compiled, rng, steps=60):
    import torch

    m = xgr.GrammarMatcher(compiled)
    bm = xgr.allocate_token_bitmask(1, 257)
    seq = []
    for _ in range(steps):
        m.fill_next_token_bitmask(bm)
        allowed = torch.nonzero(xgr.testing.bitmask_to_bool_mask(bm, 257)[0]).flatten().tolist()
        allowed = [a for a in allowed if a != EOS]
        if not allowed:
            break
        # ASCII only: XGrammar's raw text also takes bytes that are not UTF-8.
        nice = [a for a in allowed if 32 <= a < 127 or a == 10]
        if not nice:
            break
        t = rng.choice(nice)
        seq.append(t)
        if not m.accept_token(t):
            break
    return seq


def llg_masks(llg, src, seq):
    with tempfile.TemporaryDirectory() as d:
        g = os.path.join(d, "g.json")
        toks = os.path.join(d, "t.json")
        open(g, "w", encoding="utf-8").write(src)
        open(toks, "w").write(json.dumps(seq))
        r = subprocess.run([llg, "masks", "--format", "structural_tag", "--grammar", g, "--tokenizer", "bytes", "--tokens", toks],
                           capture_output=True, text=True)
    if r.returncode == 2:
        return None, r.stderr.strip()
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith('{"')], None


def fnv(ids):
    h = 0xCBF29CE484222325
    for t in sorted(ids):
        for b in t.to_bytes(4, "little"):
            h ^= b
            h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


# Bytes that never occur in UTF-8 text at a character's start: XGrammar's raw text allows
# them (byte strings that are not UTF-8); ours does not.
NOT_UTF8_START = set(range(0x80, 0xC2)) | set(range(0xF5, 0x100))


def explain(x, ours_hash):
    """A known reason why XGrammar's mask x differs from ours, or None."""
    if fnv(x - NOT_UTF8_START) == ours_hash:
        return "XGrammar allows bytes that cannot start a UTF-8 character in raw text"
    if 0x7F in x and fnv(x - {0x7F}) == ours_hash:
        return "XGrammar allows a raw DEL (0x7f) in JSON strings (LLGuidance's default and ours do not)"
    if 0x2F in x and fnv(x - {0x2F}) == ours_hash:
        return "XGrammar allows the escape \\/ in JSON strings (LLGuidance's default and ours do not)"
    if fnv(x & set(range(0x80, 0xC0))) == ours_hash:
        return "XGrammar allows any byte inside a UTF-8 character (ours: continuation bytes)"
    if fnv(x | {0x30}) == ours_hash:
        return "we allow -0 in JSON integers (XGrammar and LLGuidance do not)"
    if set(b"0123456789abcdefABCDEF") <= x and fnv({0x30}) == ours_hash:
        return "XGrammar allows any \\uXXXX escape in JSON strings (LLGuidance's default and ours: control characters)"
    if fnv((x - {0x7F}) - NOT_UTF8_START) == ours_hash:
        return "both of the above"
    return None


def show(ids):
    return "".join(chr(i) if 32 <= i < 127 else f"\\x{i:02x}" if i < 256 else "<EOS>" for i in sorted(ids))[:120]


def main():
    args = sys.argv[1:]
    if "--help" in args or "-h" in args:
        print(__doc__)
        return 0
    llg, walks, seed, corpus = "target/release/llg", 5, 1, "grammars/tests/data/structural_tag.txt"
    i = 0
    while i < len(args):
        if args[i] == "--llg":
            llg, i = args[i + 1], i + 2
        elif args[i] == "--walks":
            walks, i = int(args[i + 1]), i + 2
        elif args[i] == "--seed":
            seed, i = int(args[i + 1]), i + 2
        else:
            corpus, i = args[i], i + 1
    if not os.path.exists(llg):
        print(f"{llg} is missing: cargo build --release -p llguidance --bin llg", file=sys.stderr)
        return 2
    try:
        xgr, compiler = xgr_setup()
    except ImportError as e:
        print(f"xgrammar is not installed: {e}", file=sys.stderr)
        return 2
    rng = random.Random(seed)
    bad = compared = 0
    known = {}
    if os.path.isdir(corpus):
        todo = [{"title": f, "kind": "structural_tag", "src": open(os.path.join(corpus, f), encoding="utf-8").read(),
                 "accept": [], "error": None} for f in sorted(os.listdir(corpus)) if f.endswith(".json")]
    else:
        todo = [c for c in cases(corpus) if c["accept"]]
    for c in todo:
        if c["kind"] != "structural_tag" or c["error"] or "structures" in c["src"]:
            continue
        ours = "(ours" in c["title"]
        try:
            compiled = compiler.compile_structural_tag(c["src"])
        except Exception as e:  # noqa: BLE001
            print(f"skip: {c['title']}: xgrammar: {str(e)[:100]}")
            continue
        seqs = [list(t.encode()) for t in c["accept"]]
        seqs += [walk(xgr, compiled, rng) for _ in range(walks)]
        for seq in seqs:
            try:
                xs = xgr_masks(xgr, compiled, seq)
            except Exception as e:  # noqa: BLE001 - token formats need real special tokens
                print(f"skip: {c['title']}: {str(e)[:100]}")
                break
            ls, e = llg_masks(llg, c["src"], seq)
            if ls is None:
                print(f"skip: {c['title']}: ours: {e[:100]}")
                break
            for step, (x, l) in enumerate(zip(xs, ls)):
                compared += 1
                if "hash" in l and fnv(x) != l["hash"]:
                    why = explain(x, l["hash"])
                    if why is None and '"any_order": true' in c["src"].replace('":true', '": true') \
                            and l["allowed"] < len(x):
                        why = "any_order is exact here (XGrammar checks neither required keys nor repeats)"
                    if why:
                        known[why] = known.get(why, 0) + 1
                        if os.environ.get("DIFF_VERBOSE"):
                            print(f"known: {c['title']}: {why}")
                        continue
                    text = bytes(t for t in seq[:step] if t < 256).decode("utf-8", "replace")
                    print(f"{'note' if ours else 'DIFF'}: {c['title']}: after {text!r}: xgrammar allows {len(x)}, ours {l['allowed']}; "
                          f"xgrammar {show(x)!r}")
                    bad += not ours
                    break
    for why, n in known.items():
        print(f"known difference, {n} masks: {why}")
    print(f"{compared} masks compared, {bad} sequences differ")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
