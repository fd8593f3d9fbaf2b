#!/usr/bin/env python3
"""The bounds corpus (issue 43) through XGrammar 0.2.8 itself (the Python wheel), as
`cargo run --bin bounds` runs it through ours, LLGuidance 1.9.1 and xgrammar-rs: per case
the compile time, then the case's long valid instance token by token (Llama-3 ids from the
Hugging Face tokenizer of ../shared): mask fill p50 / p99 (µs), the slope of mask time over
position from token 100 (µs per 1,000 tokens, least squares) and the outcome. Each compile
runs in a child process given --timeout seconds (default 60; past it: "timeout").

The corpus comes from the Rust bench (`BOUNDS_DUMP=/tmp/bounds.jsonl cargo bench -p
llguidance --bench bounds`). XGrammar takes no Lark: a case `start: /R/` is given as the
EBNF `root ::= R` (the same language: a character class repeated).

Usage: bounds.py CORPUS.jsonl [--shared DIR] [--timeout S]. Needs torch, transformers and
xgrammar 0.2.8 (setup.sh). Exit status 2 when something is missing.
"""

import argparse
import json
import math
import multiprocessing as mp
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared"))


def die(msg):
    print(f"bounds.py: {msg}", file=sys.stderr)
    sys.exit(2)


def ebnf_of_lark(text):
    """`start: /R/` as XGrammar EBNF, else None."""
    m = re.fullmatch(r"start:\s*/(.*)/\s*", text)
    return f"root ::= {m.group(1)}" if m else None


def _compile(conn, tok_path, vocab_size, eos, kind, grammar):
    """Child process: compiles one case, sends ("ok", secs, serialized) or ("err", msg)."""
    try:
        import xgrammar
        from transformers import PreTrainedTokenizerFast

        hf = PreTrainedTokenizerFast(tokenizer_file=tok_path)
        info = xgrammar.TokenizerInfo.from_huggingface(hf, vocab_size=vocab_size, stop_token_ids=[eos])
        comp = xgrammar.GrammarCompiler(info, max_threads=1, cache_enabled=False)
        t0 = time.perf_counter()
        if kind == "json":
            cg = comp.compile_json_schema(grammar)
        elif kind == "structural_tag":
            cg = comp.compile_structural_tag(grammar)
        else:
            cg = comp.compile_grammar(grammar)
        conn.send(("ok", time.perf_counter() - t0, cg.serialize_json()))
    except Exception as e:  # compile errors of any kind
        conn.send(("err", f"{type(e).__name__}: {str(e)[:200]}"))


def compile_case(ctx, args, kind, grammar, timeout):
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_compile, args=(child, *args, kind, grammar), daemon=True)
    p.start()
    child.close()
    # The child loads the tokenizer first (a few seconds): not part of the compile's limit.
    if not parent.poll(timeout + 60):
        p.kill()
        p.join()
        return ("timeout",)
    r = parent.recv()
    p.join()
    if r[0] == "ok" and r[1] > timeout:
        return ("timeout",)
    return r


def stats(times_us):
    if not times_us:
        return math.nan, math.nan, "-"
    s = sorted(times_us)
    pct = lambda p: s[int((len(s) - 1) * p)]  # noqa: E731 (the Rust bench's rule)
    pts = [(i, t) for i, t in enumerate(times_us)][100:]
    slope = "-"
    if len(pts) > 10:
        n = len(pts)
        mx = sum(p[0] for p in pts) / n
        my = sum(p[1] for p in pts) / n
        sxx = sum((p[0] - mx) ** 2 for p in pts)
        sxy = sum((p[0] - mx) * (p[1] - my) for p in pts)
        slope = f"{sxy / sxx * 1000:.2f}" if sxx > 0 else "-"
    return pct(0.5), pct(0.99), slope


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", help="JSON lines from BOUNDS_DUMP")
    ap.add_argument("--shared", default=DEFAULT_SHARED)
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    tok_path = os.path.join(a.shared, "tokenizers", "llama3.tokenizer.json")
    if not os.path.exists(tok_path):
        die(f"{tok_path} is missing")
    try:
        import xgrammar
        from transformers import PreTrainedTokenizerFast
    except ImportError as e:
        die(f"{e} (run setup.sh)")
    hf = PreTrainedTokenizerFast(tokenizer_file=tok_path)
    vocab_size = len(hf)
    eos = hf.convert_tokens_to_ids("<|eot_id|>")
    info = xgrammar.TokenizerInfo.from_huggingface(hf, vocab_size=vocab_size, stop_token_ids=[eos])
    bitmask = xgrammar.allocate_token_bitmask(1, vocab_size)
    row = bitmask.numpy()[0]
    ctx = mp.get_context("spawn")
    print(f"{'case':<38} {'compile ms':>10} {'tokens':>7} {'p50 µs':>9} {'p99 µs':>9} {'slope µs/1k':>12}  outcome")
    with open(a.corpus) as f:
        cases = [json.loads(line) for line in f if line.strip()]
    for c in cases:
        kind, grammar = c["kind"], c["grammar"]
        if kind == "lark":
            grammar = ebnf_of_lark(grammar)
            if grammar is None:
                print(f"{c['name']:<38} not expressible as XGrammar EBNF here")
                continue
        r = compile_case(ctx, (tok_path, vocab_size, eos), kind, grammar, a.timeout)
        if r[0] != "ok":
            what = f"compile > {a.timeout:.0f} s" if r[0] == "timeout" else r[1]
            print(f"{c['name']:<38} {'-':>10} error: {what}")
            continue
        compile_ms = r[1] * 1e3
        cg = xgrammar.CompiledGrammar.deserialize_json(r[2], info)
        m = xgrammar.GrammarMatcher(cg)
        toks = hf.encode(c["instance"], add_special_tokens=False)
        times, outcome = [], "accepted"
        pc = time.perf_counter_ns
        for i, t in enumerate(toks):
            t0 = pc()
            m.fill_next_token_bitmask(bitmask)
            times.append((pc() - t0) / 1e3)
            allowed = (int(row[t >> 5]) >> (t & 31)) & 1
            if not allowed or not m.accept_token(t):
                outcome = f"REJECTED at token {i}"
                break
        if outcome == "accepted" and not (m.accept_token(eos) and m.is_terminated()):
            outcome = "not accepting at the end"
        p50, p99, slope = stats(times)
        print(f"{c['name']:<38} {compile_ms:>10.1f} {len(toks):>7} {p50:>9.1f} {p99:>9.1f} {slope:>12}  {outcome}")


if __name__ == "__main__":
    main()
