#!/usr/bin/env python3
"""XGrammar 0.2.8 on our tool-call structural tags.

Inputs come from our cargo bench (which also prints our own compile/mask figures):

    mkdir -p /tmp/tooltags
    TOOL_TAG_DIR=/tmp/tooltags cargo bench -p llguidance --bench tool_calls

It writes tools_N.json (an XGrammar structural tag: Qwen 3 `<tool_call>` format over N BFCL
functions) and transcript_N.json ({"text", "tokens"}: free text, one call, free text; Llama-3
token ids). Per N this script compiles the tag with
`GrammarCompiler(max_threads=1, cache_enabled=False).compile_structural_tag` (median of
--compiles), then over --decodes fresh matchers feeds the transcript's tokens: per token
`fill_next_token_bitmask` (timed: the "mask") + `accept_token` (timed separately). Reports
the mask p50/p99 over all steps and the p50 in the free text before `<tool_call>`.

Needs ../shared (the Llama-3 tokenizer) and a venv with torch, transformers and xgrammar
(see setup.sh). Exit status 2 when either, or the input folder, is missing.
"""

import argparse
import glob
import json
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared"))


def die(msg):
    print(f"tool_calls.py: {msg}", file=sys.stderr)
    sys.exit(2)


def pct(v, p):
    v = sorted(v)
    return v[(len(v) - 1) * p // 100] if v else float("nan")


def main():
    ap = argparse.ArgumentParser(
        description="XGrammar 0.2.8 compile and mask times on the tool-call structural tags "
        "written by `TOOL_TAG_DIR=DIR cargo bench -p llguidance --bench tool_calls`."
    )
    ap.add_argument("--dir", default="/tmp/tooltags", help="folder with tools_N.json, transcript_N.json (default %(default)s)")
    ap.add_argument("--shared", default=DEFAULT_SHARED, help="the shared/ folder (default: %(default)s)")
    ap.add_argument("--tokenizer", help="tokenizer.json (default: SHARED/tokenizers/llama3.tokenizer.json)")
    ap.add_argument("--compiles", type=int, default=3, help="compiles per N, median reported (default 3)")
    ap.add_argument("--decodes", type=int, default=5, help="fresh decodes of the transcript per N (default 5)")
    ap.add_argument("--threads", type=int, default=1, help="GrammarCompiler max_threads (default 1)")
    args = ap.parse_args()

    tok_path = args.tokenizer or os.path.join(args.shared, "tokenizers", "llama3.tokenizer.json")
    if not os.path.isfile(tok_path):
        die(f"needs ../shared: tokenizer {tok_path!r} is missing (pass --shared or --tokenizer)")
    missing = []
    for name in ("torch", "transformers", "xgrammar"):
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        die(f"missing Python package(s): {', '.join(missing)} (see setup.sh in {HERE})")
    sizes = sorted(
        int(m.group(1))
        for f in glob.glob(os.path.join(args.dir, "tools_*.json"))
        if (m := re.fullmatch(r"tools_(\d+)\.json", os.path.basename(f)))
        and os.path.isfile(os.path.join(args.dir, f"transcript_{m.group(1)}.json"))
    )
    if not sizes:
        die(f"no tools_N.json + transcript_N.json in {args.dir!r}; make them with "
            "`TOOL_TAG_DIR=DIR cargo bench -p llguidance --bench tool_calls`")

    import xgrammar
    from importlib.metadata import version
    from transformers import PreTrainedTokenizerFast

    hf = PreTrainedTokenizerFast(tokenizer_file=tok_path)
    vocab = len(hf)  # 128256 for Llama 3: the model's vocabulary
    eos = hf.convert_tokens_to_ids("<|end_of_text|>")
    info = xgrammar.TokenizerInfo.from_huggingface(hf, vocab_size=vocab, stop_token_ids=[eos])
    bitmask = xgrammar.allocate_token_bitmask(1, vocab)
    row = bitmask.numpy()[0]
    print(f"# xgrammar {version('xgrammar')}, GrammarCompiler(max_threads={args.threads}, "
          f"cache_enabled=False).compile_structural_tag(tag JSON string); tokenizer {tok_path} "
          f"(vocab {vocab}, stop {eos}); compile median of {args.compiles}, {args.decodes} decodes")

    rows = []
    for n in sizes:
        with open(os.path.join(args.dir, f"tools_{n}.json"), encoding="utf-8") as fh:
            tag = fh.read()
        with open(os.path.join(args.dir, f"transcript_{n}.json"), encoding="utf-8") as fh:
            tr = json.load(fh)
        text, toks = tr["text"], tr["tokens"]
        if hf.decode(toks) != text:
            print(f"warning: N={n}: the transcript's tokens do not decode to its text", file=sys.stderr)
        prefix = text.split("<tool_call>")[0]
        free_steps = len(hf.encode(prefix, add_special_tokens=False))

        compiles, cg, err = [], None, None
        for _ in range(args.compiles):
            comp = xgrammar.GrammarCompiler(info, max_threads=args.threads, cache_enabled=False)
            t0 = time.perf_counter()
            try:
                cg = comp.compile_structural_tag(tag)
            except Exception as e:
                err = f"{type(e).__name__}: {str(e)[:300]}"
                break
            compiles.append(time.perf_counter() - t0)
        if err:
            print(f"{n:>4} compile failed: {err}")
            continue
        t0 = time.perf_counter()
        m = xgrammar.GrammarMatcher(cg)
        m.fill_next_token_bitmask(bitmask)
        first = time.perf_counter() - t0

        masks, accepts, free = [], [], []
        rejected, eos_ok = None, True
        pc = time.perf_counter_ns
        for _ in range(args.decodes):
            m = xgrammar.GrammarMatcher(cg)
            fill, acc = m.fill_next_token_bitmask, m.accept_token
            for i, t in enumerate(toks):
                a = pc()
                fill(bitmask)
                b = pc()
                ok = acc(t)
                c = pc()
                masks.append((b - a) / 1e3)
                accepts.append((c - b) / 1e3)
                if i < free_steps:
                    free.append((b - a) / 1e3)
                if not ok or not (int(row[t >> 5]) >> (t & 31)) & 1:
                    rejected = (i, hf.decode(toks[:i])[-40:])
                    break
            if rejected:
                break
            fill(bitmask)
            eos_ok = eos_ok and bool((int(row[eos >> 5]) >> (eos & 31)) & 1)
        if rejected:
            print(f"{n:>4} xgrammar rejects the transcript at step {rejected[0]} after …{rejected[1]!r}")
        rows.append((n, statistics.median(compiles) * 1e3, (statistics.median(compiles) + first) * 1e3,
                     pct(masks, 50), pct(masks, 99), pct(free, 50), pct(accepts, 50), len(masks),
                     len(toks), free_steps, eos_ok))

    print()
    print(f"{'N':>4} | {'xgr compile ms':>14} | {'xgr mask p50 µs':>15} | {'p99 µs':>8} | "
          f"{'free-text p50 µs':>16} | {'accept p50 µs':>13} | {'compile+1st mask ms':>19} | "
          f"{'masks':>5} | tokens (free) | EOS at end")
    for n, comp, ttfm, p50, p99, fp50, ap50, nm, nt, fs, eok in rows:
        print(f"{n:>4} | {comp:>14.1f} | {p50:>15.1f} | {p99:>8.1f} | {fp50:>16.1f} | {ap50:>13.1f} | "
              f"{ttfm:>19.1f} | {nm:>5} | {nt} ({fs}) | {'allowed' if eok else 'NOT allowed'}")


if __name__ == "__main__":
    main()
