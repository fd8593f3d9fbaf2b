#!/usr/bin/env python3
"""Benchmark of the llg_rs Python binding against the llguidance wheel, on MaskBench.

Not a test: it prints figures. Needs the project's ../shared (MaskBench schemas and the
Llama 3 tokenizer), numpy, llg_rs (pip install python/) and, for the comparison, the
llguidance wheel (pip install llguidance); without the wheel (or with --skip-llguidance)
only llg_rs's figures are printed.

Measurements (times in microseconds, median and p99; ratios are llg_rs / llguidance):
  1. per-call overhead of llg_rs.numpy.fill_next_token_bitmask: the wall time of the
     Python call minus the time the engine reports for the fill (LLMatcher.last_mask_ns),
     while walking each schema's first valid instance token by token; and the wall time
     per fill of both engines on the same steps (same token ids), with a bit-by-bit
     comparison of the two masks at every step;
  2. fill_next_token_bitmask_par on a batch of matchers walked in lockstep, with
     LLExecutor(num_threads=1) and (num_threads=2), for both engines, --reps times;
  3. compile time (LLMatcher construction) per schema for both engines;
  4. a breakdown of where llg_rs's per-call overhead goes (numpy wrapper pieces).

Example:
    python python/bench/bench_binding.py --n 64 --reps 3 | tee /tmp/bench_binding.txt
"""

import argparse
import gc
import glob
import json
import os
import random
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.normpath(os.path.join(REPO, "..", "shared"))

pc = time.perf_counter_ns


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        description="Benchmark the llg_rs Python binding against the llguidance wheel on MaskBench.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    ap.add_argument(
        "--maskbench",
        default=os.path.join(SHARED, "data", "maskbench"),
        help="folder of MaskBench JSON files ({'schema': ..., 'tests': [...]})",
    )
    ap.add_argument(
        "--tokenizer",
        default=os.path.join(SHARED, "tokenizers", "llama3.tokenizer.json"),
        help="tokenizer.json given to both engines",
    )
    ap.add_argument(
        "--n", type=int, default=64, help="number of schemas (compiling in both engines, with a valid instance) to use"
    )
    ap.add_argument(
        "--batch", type=int, default=64, help="matchers in the batch of measurement 2 (the first of the --n schemas)"
    )
    ap.add_argument("--reps", type=int, default=3, help="repetitions of the batch (par) measurement")
    ap.add_argument("--seed", type=int, default=0, help="seed of the shuffle that picks the schemas")
    ap.add_argument("--max-tokens", type=int, default=1000, help="walk at most this many tokens of each instance")
    ap.add_argument("--threads", type=int, default=2, help="thread count compared with 1 in measurement 2")
    ap.add_argument(
        "--skip-llguidance",
        action="store_true",
        help="measure llg_rs only (also done when the llguidance wheel is not importable)",
    )
    ap.add_argument("--show-diffs", type=int, default=10, help="list this many mask differences")
    return ap.parse_args(argv)


# ---------------------------------------------------------------- statistics


def pct(xs, q):
    if not xs:
        return float("nan")
    s = sorted(xs)
    # nearest rank
    k = max(0, min(len(s) - 1, int(-(-q * len(s) // 100)) - 1))
    return s[k]


def med(xs):
    return pct(xs, 50)


def us(ns):
    return ns / 1000.0


def fmt_us(x):
    if x != x:
        return "     n/a"
    return f"{x:8.2f}"


def ratio(a, b):
    if not b or a != a or b != b:
        return "   n/a"
    return f"{a / b:6.2f}x"


def stat_line(label, xs_ns, ref_ns=None):
    m, p = us(med(xs_ns)), us(pct(xs_ns, 99))
    line = f"  {label:<34} n={len(xs_ns):6d}  median {fmt_us(m)} us  p99 {fmt_us(p)} us"
    if xs_ns:
        line += f"  mean {fmt_us(us(sum(xs_ns) / len(xs_ns)))} us"
    if ref_ns:
        line += f"  | ratio median {ratio(med(xs_ns), med(ref_ns))}  p99 {ratio(pct(xs_ns, 99), pct(ref_ns, 99))}"
    return line


def out(*a):
    print(*a, flush=True)


def busy_s():
    """(CPU seconds all processes have been busy, CPU seconds of this process), Linux only."""
    try:
        with open("/proc/stat") as fh:
            f = [int(x) for x in fh.readline().split()[1:]]
        busy = (sum(f[:8]) - f[3] - f[4]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    t = os.times()
    return busy, t.user + t.system


def others_line(b0, b1, wall_s):
    """How many cores other processes kept busy between two busy_s() samples."""
    if b0 is None or b1 is None or wall_s <= 0:
        return ""
    return f"  (other processes: {max(0.0, (b1[0] - b0[0]) - (b1[1] - b0[1])) / wall_s:.2f} cores)"


# ---------------------------------------------------------------- mask helpers


def bit(row, t):
    return (int(row[t >> 5]) >> (t & 31)) & 1


# ---------------------------------------------------------------- main


def main(argv=None):
    args = parse_args(argv)

    for what, path in (("MaskBench folder", args.maskbench), ("tokenizer", args.tokenizer)):
        if not os.path.exists(path):
            if os.path.normpath(path).startswith(SHARED + os.sep) and not os.path.isdir(SHARED):
                out(
                    f"error: this benchmark needs ../shared beside the repository root "
                    f"(MaskBench schemas and tokenizers); {SHARED} is missing."
                )
            else:
                out(f"error: {what} not found: {path}")
            return 2

    try:
        import numpy as np
    except ImportError:
        out("error: numpy is needed (pip install numpy)")
        return 2
    try:
        import llg_rs
        import llg_rs.numpy as rs_np
    except ImportError as e:
        out(f"error: llg_rs is not importable ({e}); pip install {os.path.join(REPO, 'python')}")
        return 2

    llg = llg_np = None
    if args.skip_llguidance:
        out("llguidance: skipped (--skip-llguidance): llg_rs figures only")
    else:
        try:
            import llguidance as llg
            import llguidance.numpy as llg_np
        except ImportError as e:
            llg = llg_np = None
            out(
                f"llguidance: WHEEL NOT IMPORTABLE ({e}): skipping all llguidance figures "
                f"(pip install llguidance==1.9.1 to compare)"
            )

    import platform

    out("== bench_binding ==")
    out(
        f"python {platform.python_version()}  numpy {np.__version__}  llg_rs {llg_rs.__version__}"
        + (f"  llguidance {getattr(llg, '__version__', '?')}" if llg else "")
    )
    out(f"cpus {os.cpu_count()}  loadavg {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    out(f"maskbench {args.maskbench}\ntokenizer {args.tokenizer}")
    out(
        f"n {args.n}  batch {args.batch}  reps {args.reps}  seed {args.seed}  max-tokens {args.max_tokens}  "
        f"threads 1 vs {args.threads}"
    )

    t0 = pc()
    tok_rs = llg_rs.LLTokenizer(args.tokenizer)
    t1 = pc()
    tok_llg = llg.LLTokenizer(args.tokenizer) if llg else None
    t2 = pc()
    out(
        f"tokenizer load: llg_rs {(t1 - t0) / 1e6:.0f} ms"
        + (f", llguidance {(t2 - t1) / 1e6:.0f} ms" if llg else "")
        + f"; vocab {tok_rs.vocab_size}"
    )
    if llg and tok_llg.vocab_size != tok_rs.vocab_size:
        out(f"WARNING: vocab sizes differ: llg_rs {tok_rs.vocab_size} llguidance {tok_llg.vocab_size}")
    vocab = tok_rs.vocab_size
    eos = tok_rs.eos_token

    # timer cost, to read the overhead figures against
    tc = []
    for _ in range(20000):
        a = pc()
        b = pc()
        tc.append(b - a)
    out(f"perf_counter_ns back-to-back: median {med(tc)} ns, p99 {pct(tc, 99)} ns (included in every wall time)")

    # warm-up compile (lazy tokenizer structures) for both
    for mod, tok in ((llg_rs, tok_rs), (llg, tok_llg)):
        if mod:
            m = mod.LLMatcher(tok, mod.LLMatcher.grammar_from_json_schema('{"type":"object"}'), log_level=0)
            bm = np.zeros((1, (vocab + 31) // 32), dtype=np.int32)
            (rs_np if mod is llg_rs else llg_np).fill_next_token_bitmask(m, bm, 0)

    # ------------------------------------------------------------ 3. compile (and schema choice)
    files = sorted(glob.glob(os.path.join(args.maskbench, "**", "*.json"), recursive=True))
    files = [f for f in files if os.path.basename(f).lower() != "readme.json"]
    random.Random(args.seed).shuffle(files)
    out(f"\nMaskBench files: {len(files)} (shuffled with seed {args.seed}; taking the first {args.n} usable)")

    chosen = []  # dicts: name, schema, tokens, m_rs, m_llg, compile_rs, compile_llg
    n_tried = n_bad_file = n_no_valid = 0
    fail_rs, fail_llg, fail_both = [], [], []
    gc.disable()
    for f in files:
        if len(chosen) >= args.n:
            break
        name = os.path.splitext(os.path.basename(f))[0]
        try:
            with open(f) as fh:
                d = json.load(fh)
            schema = d["schema"]
            tests = d.get("tests", [])
        except Exception:
            n_bad_file += 1
            continue
        valid = [t for t in tests if t.get("valid")]
        if not valid:
            n_no_valid += 1
            continue
        n_tried += 1
        s = json.dumps(schema)
        res = {}
        order = [(llg_rs, tok_rs, "rs")] + ([(llg, tok_llg, "llg")] if llg else [])
        if n_tried % 2 == 0:
            order.reverse()
        for mod, tok, key in order:
            err = None
            a = pc()
            try:
                g = mod.LLMatcher.grammar_from_json_schema(s)
                m = mod.LLMatcher(tok, g, log_level=0)
                b = pc()
                if m.is_error():
                    err = m.get_error()
            except Exception as e:  # noqa: BLE001
                b = pc()
                m, err = None, f"{type(e).__name__}: {e}"
            res[key] = (m, b - a, err)
        e_rs = res["rs"][2]
        e_llg = res["llg"][2] if llg else None
        if e_rs and e_llg:
            fail_both.append((name, e_rs, e_llg))
            continue
        if e_rs:
            fail_rs.append((name, e_rs))
            continue
        if e_llg:
            fail_llg.append((name, e_llg))
            continue
        text = json.dumps(valid[0]["data"])
        toks = tok_rs.tokenize_str(text)
        same_tok = None
        if llg:
            same_tok = tok_llg.tokenize_str(text) == toks
        chosen.append(
            dict(
                name=name,
                tokens=toks[: args.max_tokens],
                n_tok_full=len(toks),
                same_tok=same_tok,
                m_rs=res["rs"][0],
                compile_rs=res["rs"][1],
                m_llg=res["llg"][0] if llg else None,
                compile_llg=res["llg"][1] if llg else None,
            )
        )
    gc.enable()

    out(
        f"schemas with a valid instance tried: {n_tried}; used {len(chosen)}; "
        f"skipped: no valid instance {n_no_valid}, unreadable {n_bad_file}, "
        f"compile failed in llg_rs only {len(fail_rs)}, in llguidance only {len(fail_llg)}, in both {len(fail_both)}"
    )
    for name, e in fail_rs[:10]:
        out(f"  llg_rs only failed:     {name}: {e[:160]}")
    for name, e in fail_llg[:10]:
        out(f"  llguidance only failed: {name}: {e[:160]}")
    for name, e1, e2 in fail_both[:5]:
        out(f"  both failed:            {name}: {e1[:100]} | {e2[:100]}")
    if not chosen:
        out("no usable schema")
        return 1
    trunc = sum(1 for c in chosen if c["n_tok_full"] > len(c["tokens"]))
    if trunc:
        out(f"instances truncated to --max-tokens {args.max_tokens}: {trunc}")
    if llg:
        dt = sum(1 for c in chosen if not c["same_tok"])
        out(f"instances where the two tokenizers' tokenize_str differ: {dt} (llg_rs's ids are fed to both)")

    out("\n== 3. compile time (LLMatcher construction, incl. grammar_from_json_schema) ==")
    c_rs = [c["compile_rs"] for c in chosen]
    c_llg = [c["compile_llg"] for c in chosen] if llg else None
    out(stat_line("llg_rs", c_rs, c_llg))
    if llg:
        out(stat_line("llguidance", c_llg))
    slow = sorted(chosen, key=lambda c: -c["compile_rs"])[:3]
    out(
        "  slowest in llg_rs: "
        + "; ".join(
            f"{c['name']} {c['compile_rs'] / 1e6:.1f} ms"
            + (f" (llguidance {c['compile_llg'] / 1e6:.1f} ms)" if llg else "")
            for c in slow
        )
    )
    if llg:
        slow = sorted(chosen, key=lambda c: -c["compile_llg"])[:3]
        out(
            "  slowest in llguidance: "
            + "; ".join(
                f"{c['name']} {c['compile_llg'] / 1e6:.1f} ms (llg_rs {c['compile_rs'] / 1e6:.1f} ms)" for c in slow
            )
        )

    # ------------------------------------------------------------ 1. walk, overhead, per-fill time, cross-check
    out("\n== 1. single-matcher walk: llg_rs.numpy.fill_next_token_bitmask per call ==")
    words = (vocab + 31) // 32
    bm_rs = np.zeros((1, words), dtype=np.int32)
    bm_llg = np.zeros((1, words), dtype=np.int32)
    fill_rs, fill_llg = rs_np.fill_next_token_bitmask, (llg_np.fill_next_token_bitmask if llg else None)
    overhead, wall_rs, eng_rs, wall_llg = [], [], [], []
    n_steps = n_diff = 0
    diffs = []
    diff_kinds = {}
    diff_schemas = {}
    rej_llg = rej_rs = notmask_rs = notmask_llg = 0
    rejects = []
    eos_disagree = 0
    not_accepting_rs = not_accepting_llg = 0
    step_no = 0
    b0, w0 = busy_s(), time.monotonic()
    gc.disable()
    for c in chosen:
        m_rs, m_llg = c["m_rs"], c["m_llg"]
        toks = c["tokens"]
        walked = 0
        for pos in range(len(toks) + 1):
            last = pos == len(toks)
            step_no += 1
            # the two engines alternate which fills first
            if step_no % 2 == 0 or not llg:
                a = pc()
                fill_rs(m_rs, bm_rs, 0)
                b = pc()
                if llg:
                    c1 = pc()
                    fill_llg(m_llg, bm_llg, 0)
                    d1 = pc()
            else:
                c1 = pc()
                fill_llg(m_llg, bm_llg, 0)
                d1 = pc()
                a = pc()
                fill_rs(m_rs, bm_rs, 0)
                b = pc()
            e = m_rs.last_mask_ns
            wall_rs.append(b - a)
            eng_rs.append(e)
            overhead.append(b - a - e)
            if llg:
                wall_llg.append(d1 - c1)
            n_steps += 1
            t = eos if last else toks[pos]
            r0, l0 = bm_rs[0], (bm_llg[0] if llg else None)
            in_rs = bit(r0, t)
            in_llg = bit(l0, t) if llg else 1
            if llg and not np.array_equal(r0, l0):
                n_diff += 1
                rs_extra = bool(np.any(r0 & ~l0))
                llg_extra = bool(np.any(l0 & ~r0))
                kind = (
                    "both ways"
                    if rs_extra and llg_extra
                    else ("llg_rs allows more" if rs_extra else "llguidance allows more")
                )
                if kind == "llg_rs allows more" and int(np.unpackbits(l0.view(np.uint8)).sum()) == 1:
                    kind = "llguidance allows 1 token (forced-token shortcut)"
                diff_kinds[kind] = diff_kinds.get(kind, 0) + 1
                diff_schemas.setdefault(c["name"], {}).setdefault(kind, 0)
                diff_schemas[c["name"]][kind] += 1
                if len(diffs) < args.show_diffs:
                    x = np.bitwise_xor(r0, l0).view(np.uint32)
                    idx = np.nonzero(np.unpackbits(x.view(np.uint8), bitorder="little"))[0]
                    only_rs = [int(i) for i in idx if bit(r0, int(i))]
                    only_llg = [int(i) for i in idx if bit(l0, int(i))]
                    diffs.append(
                        (
                            c["name"],
                            pos,
                            len(toks),
                            len(only_rs),
                            len(only_llg),
                            [tok_rs.dbg_tokens([i]) for i in only_rs[:4]],
                            [tok_rs.dbg_tokens([i]) for i in only_llg[:4]],
                            tok_rs.decode_str(toks[:pos])[-40:],
                        )
                    )
            if last:
                if llg and in_rs != in_llg:
                    eos_disagree += 1
                if not m_rs.is_accepting():
                    not_accepting_rs += 1
                if llg and not m_llg.is_accepting():
                    not_accepting_llg += 1
                break
            if not in_rs:
                notmask_rs += 1
            if not in_llg:
                notmask_llg += 1
            ok_llg = m_llg.consume_token(t) if llg else True
            if not ok_llg:
                rej_llg += 1
                rejects.append((c["name"], pos, "llguidance", m_llg.get_error()[:120]))
                break
            ok_rs = m_rs.consume_token(t)
            if not ok_rs:
                rej_rs += 1
                rejects.append((c["name"], pos, "llg_rs", m_rs.get_error()[:120]))
                break
            walked += 1
        c["walk"] = toks[:walked]
    gc.enable()

    out(
        f"schemas {len(chosen)}, fills (steps) {n_steps}, tokens consumed "
        f"{sum(len(c['walk']) for c in chosen)}" + others_line(b0, busy_s(), time.monotonic() - w0)
    )
    ov_sorted = sorted(overhead)
    out(stat_line("llg_rs overhead (wall-engine)", overhead))
    out(
        f"  {'':<34} goal <= 2 us: median {'OK' if us(med(overhead)) <= 2 else 'ABOVE'}, "
        f"p99 {'OK' if us(pct(overhead, 99)) <= 2 else 'ABOVE'}; "
        f"share of calls <= 2 us: {100.0 * sum(1 for x in ov_sorted if x <= 2000) / len(ov_sorted):.1f}%; "
        f"min {us(ov_sorted[0]):.2f} us"
    )
    for lo, hi in ((0, 10_000), (10_000, 100_000), (100_000, 1 << 62)):
        sub = [o for o, e in zip(overhead, eng_rs) if lo <= e < hi]
        hi_s = f"{hi // 1000} us" if hi < (1 << 62) else "inf"
        out(stat_line(f"  overhead, engine {lo // 1000}..{hi_s}", sub))
    out(stat_line("llg_rs engine (last_mask_ns)", eng_rs))
    out(stat_line("llg_rs wall per fill", wall_rs, wall_llg if llg else None))
    if llg:
        out(stat_line("llguidance wall per fill", wall_llg))
        out(
            f"  total fill wall: llg_rs {sum(wall_rs) / 1e6:.1f} ms, llguidance {sum(wall_llg) / 1e6:.1f} ms "
            f"(ratio {sum(wall_rs) / max(1, sum(wall_llg)):.2f}x)"
        )
        out("cross-check:")
        out(f"  steps where the masks differ in any bit: {n_diff} of {n_steps}")
        out(
            f"  sampled token not in mask: llg_rs {notmask_rs}, llguidance {notmask_llg}; "
            f"EOS allowed-ness differs at the end: {eos_disagree}"
        )
        out(f"  token rejected by consume_token (walk stopped for both): llguidance {rej_llg}, llg_rs {rej_rs}")
        out(f"  not accepting at the end of the instance: llg_rs {not_accepting_rs}, llguidance {not_accepting_llg}")
        for r in rejects[:10]:
            out(f"    rejected: {r[0]} at token {r[1]} by {r[2]}: {r[3]}")
        for k, v in sorted(diff_kinds.items(), key=lambda kv: -kv[1]):
            out(f"    {v:6d} steps: {k}")
        out(f"  schemas with a differing step: {len(diff_schemas)} of {len(chosen)}; most differing:")
        for nm, ks in sorted(diff_schemas.items(), key=lambda kv: -sum(kv[1].values()))[:8]:
            out(f"    {nm}: " + ", ".join(f"{v} {k}" for k, v in ks.items()))
        out(f"  first {len(diffs)} differing steps:")
        for dd in diffs:
            out(
                f"    differ: {dd[0]} at token {dd[1]}/{dd[2]}: only llg_rs allows {dd[3]} {dd[5]}, "
                f"only llguidance allows {dd[4]} {dd[6]}; after ...{dd[7]!r}"
            )
    else:
        out(f"  token rejected by llg_rs: {rej_rs}; not in llg_rs mask: {notmask_rs}")

    # ------------------------------------------------------------ 2. batch fill, 1 vs N threads
    out(
        f"\n== 2. fill_next_token_bitmask_par on {min(len(chosen), args.batch)} matchers in lockstep, "
        f"LLExecutor(num_threads=1) vs ({args.threads}) =="
    )
    bchosen = chosen[: args.batch]
    batch = len(bchosen)
    walks = [c["walk"] for c in bchosen]
    engines = [("llg_rs", llg_rs, rs_np, "m_rs")] + ([("llguidance", llg, llg_np, "m_llg")] if llg else [])
    execs = {(name, nt): mod.LLExecutor(num_threads=nt) for name, mod, _, _ in engines for nt in (1, args.threads)}
    bm_b = np.zeros((batch, words), dtype=np.int32)

    def run_batch(name, mod_np, key, nt):
        ex = execs[(name, nt)]
        ms = [c[key] for c in bchosen]
        for m in ms:
            m.reset()
        times = []
        sizes = []
        active = list(range(batch))
        step = 0
        bad = 0
        fpar = mod_np.fill_next_token_bitmask_par
        gc.disable()
        while active:
            lst = [(ms[i], i) for i in active]
            a = pc()
            fpar(ex, lst, bm_b)
            b = pc()
            times.append(b - a)
            sizes.append(len(lst))
            if key == "m_rs" and nt == 1:
                es = [ms[i].last_mask_ns for i in active]
                eng_sum.append(sum(es))
                eng_max.append(max(es))
                eng_big.append(len(es) >= min_big)
            nxt = []
            for i in active:
                w = walks[i]
                if step < len(w):
                    if not ms[i].consume_token(w[step]):
                        bad += 1
                        continue
                    nxt.append(i)
            active = nxt
            step += 1
        gc.enable()
        return times, sizes, bad

    eng_sum, eng_max, eng_big = [], [], []  # llg_rs, 1 thread: per batch, the sum and the max of the engine times
    # warm-up (not measured)
    for name, mod, mod_np, key in engines:
        run_batch(name, mod_np, key, args.threads)
    results = {}  # (name, nt) -> list of per-rep times
    results_big = {}  # the same, only the batches of at least min_big matchers
    min_big = max(2, batch // 8)
    lens = sorted(len(w) + 1 for w in walks)
    out(
        f"  batch steps: {lens[-1]} (fills per matcher: median {med(lens)}, max {lens[-1]}); the tail of the walk "
        f"has few matchers left, so the speed-up is also given over the batches of >= {min_big} matchers"
    )
    for rep in range(args.reps):
        plan = [(e, nt) for e in engines for nt in (1, args.threads)]
        if rep % 2 == 1:
            plan.reverse()
        for (name, mod, mod_np, key), nt in plan:
            b0, w0 = busy_s(), time.monotonic()
            times, sizes, bad = run_batch(name, mod_np, key, nt)
            oth = others_line(b0, busy_s(), time.monotonic() - w0)
            if bad:
                out(f"  WARNING: {name} rejected {bad} tokens in the batch walk")
            results.setdefault((name, nt), []).append(times)
            big = [t for t, z in zip(times, sizes) if z >= min_big]
            results_big.setdefault((name, nt), []).append(big)
            out(
                f"  rep {rep + 1} {name:<10} threads {nt}: batches {len(times):5d}  total {sum(times) / 1e6:8.2f} ms"
                f" (batches of >= {min_big}: {len(big)}, {sum(big) / 1e6:7.2f} ms)"
                f"  median {fmt_us(us(med(times)))} us  p99 {fmt_us(us(pct(times, 99)))} us" + oth
            )
    out("summary (per rep: total of batch times; speed-up = total(1 thread) / total(N threads)):")
    if eng_sum:
        ideal = sum(max(sm / args.threads, mx) for sm, mx in zip(eng_sum, eng_max))
        out(
            f"  load balance bound (llg_rs engine times, 1-thread runs): sum of fills {sum(eng_sum) / 1e6:.1f} ms, "
            f"ideal {args.threads}-thread makespan sum(max(sum/{args.threads}, max)) {ideal / 1e6:.1f} ms -> "
            f"at most {sum(eng_sum) / max(1, ideal):.2f}x speed-up with perfect scheduling; the batch's slowest "
            f"mask alone is {sum(eng_max) / max(1, sum(eng_sum)) * 100:.0f}% of the work"
        )
        bs = [sm for sm, bg in zip(eng_sum, eng_big) if bg]
        bi = sum(max(sm / args.threads, mx) for sm, mx, bg in zip(eng_sum, eng_max, eng_big) if bg)
        out(f"  the same over the batches of >= {min_big}: at most {sum(bs) / max(1, bi):.2f}x")
    speed = {}
    for name, _, _, _ in engines:
        r1, rN = results[(name, 1)], results[(name, args.threads)]
        sp = [sum(x) / max(1, sum(y)) for x, y in zip(r1, rN)]
        spm = [med(x) / max(1, med(y)) for x, y in zip(r1, rN)]
        speed[name] = sp
        best1 = min(r1, key=sum)
        bestN = min(rN, key=sum)
        b1, bN = results_big[(name, 1)], results_big[(name, args.threads)]
        spb = [sum(x) / max(1, sum(y)) for x, y in zip(b1, bN)]
        out(
            f"  {name}: speed-up per rep over batches of >= {min_big}: {', '.join(f'{s:.2f}x' for s in spb)}; "
            f"best-of-reps {min(sum(x) for x in b1) / max(1, min(sum(y) for y in bN)):.2f}x, median {med(spb):.2f}x"
        )
        out(
            f"  {name}: speed-up per rep (total) {', '.join(f'{s:.2f}x' for s in sp)}; "
            f"(median batch) {', '.join(f'{s:.2f}x' for s in spm)}"
        )
        out(
            f"  {name}: best-of-reps total 1 thread {sum(best1) / 1e6:.2f} ms, {args.threads} threads "
            f"{sum(bestN) / 1e6:.2f} ms -> {sum(best1) / max(1, sum(bestN)):.2f}x; "
            f"median of per-rep speed-ups {med(sp):.2f}x, max {max(sp):.2f}x (goal >= 1.8x: "
            f"{'met' if med(sp) >= 1.8 else 'not met'} by the median, "
            f"{'met' if max(sp) >= 1.8 else 'not met'} by the max)"
        )
        for nt, best in ((1, best1), (args.threads, bestN)):
            allt = [t for rr in results[(name, nt)] for t in rr]
            out(
                f"    {name} threads {nt}: batch time over all reps median {fmt_us(us(med(allt)))} us, "
                f"p99 {fmt_us(us(pct(allt, 99)))} us; best rep median {fmt_us(us(med(best)))} us, "
                f"p99 {fmt_us(us(pct(best, 99)))} us"
            )
    if llg:
        for nt in (1, args.threads):
            a = min(sum(x) for x in results[("llg_rs", nt)])
            b = min(sum(x) for x in results[("llguidance", nt)])
            ma = min(med(x) for x in results[("llg_rs", nt)])
            mb = min(med(x) for x in results[("llguidance", nt)])
            out(f"  ratio llg_rs / llguidance, threads {nt}: best total {a / b:.2f}x, best median batch {ma / mb:.2f}x")

    # ------------------------------------------------------------ 4. where the overhead goes
    out("\n== 4. llg_rs per-call overhead breakdown (tight loops, one matcher at its start state) ==")
    m = chosen[0]["m_rs"]
    m.reset()
    row_arr = np.zeros((1, words), dtype=np.int32)
    row = row_arr[0, :]
    ptr, nbytes = row.ctypes.data, row.nbytes
    N = 20000

    def loop(fn, engine=False):
        xs = []
        gc.disable()
        for _ in range(N):
            a = pc()
            fn()
            b = pc()
            xs.append(b - a - (m.last_mask_ns if engine else 0))
        gc.enable()
        return med(xs), pct(xs, 99)

    check = getattr(rs_np, "_check", None)
    from ctypes import addressof, c_char

    i32 = np.dtype(np.int32)

    def lean_fill(matcher, bitmask, index=0):
        # a sketch of a cheaper pure-Python wrapper, for comparison only
        if bitmask.dtype is not i32 and bitmask.dtype != i32:
            raise AssertionError("Mask must be int32")
        if bitmask.ndim != 2:
            raise AssertionError("Mask must be 2D")
        r = bitmask[index]
        matcher.unsafe_compute_mask_ptr(addressof(c_char.from_buffer(r)), r.nbytes)  # needs writable, contiguous

    items = [
        ("timer only (empty lambda)", lambda: None, False),
        ("llg_rs.numpy._check(bitmask)", (lambda: check(row_arr)) if check else None, False),
        ("bitmask[index, :]", lambda: row_arr[0, :], False),
        ('row.flags["C_CONTIGUOUS"]', lambda: row.flags["C_CONTIGUOUS"], False),
        ("row.ctypes.data", lambda: row.ctypes.data, False),
        ("row.__array_interface__['data'][0]", lambda: row.__array_interface__["data"][0], False),
        ("row.nbytes", lambda: row.nbytes, False),
        ("bitmask[index] (instead of [index, :])", lambda: row_arr[0], False),
        ("ctypes.addressof(c_char.from_buffer(row))", lambda: addressof(c_char.from_buffer(row)), False),
        ("memoryview(row) (~ buffer-protocol cost)", lambda: memoryview(row), False),
        ("m.last_mask_ns (getter)", lambda: m.last_mask_ns, False),
        ("m.unsafe_compute_mask_ptr(p, n) - engine", lambda: m.unsafe_compute_mask_ptr(ptr, nbytes), True),
        ("fill_next_token_bitmask(m, bm, 0) - engine", lambda: fill_rs(m, row_arr, 0), True),
        ("fill_next_token_bitmask wall (incl. engine)", lambda: fill_rs(m, row_arr, 0), False),
        ("lean wrapper (sketch below) - engine", lambda: lean_fill(m, row_arr, 0), True),
    ]
    if llg:
        ml = chosen[0]["m_llg"]
        ml.reset()
        items.append(("llguidance fill_next_token_bitmask wall", lambda: fill_llg(ml, row_arr, 0), False))
        items.append(
            ("llguidance unsafe_compute_mask_ptr wall", lambda: ml.unsafe_compute_mask_ptr(ptr, nbytes), False)
        )
    e_ns = []
    for label, fn, engine in items:
        if fn is None:
            continue
        a, b = loop(fn, engine)
        out(f"  {label:<44} median {us(a):7.3f} us  p99 {us(b):7.3f} us")
        if label.startswith("fill_next_token_bitmask(m"):
            for _ in range(200):
                fill_rs(m, row_arr, 0)
                e_ns.append(m.last_mask_ns)
    out(
        f"  (engine time of that start-state fill: median {us(med(e_ns)):.3f} us; tight-loop figures include "
        f"the timer, ~{us(med(tc)):.2f} us)"
    )

    out(
        "\n  the same pieces timed inside the walk of measurement 1 (llg_rs.numpy.fill_next_token_bitmask inlined,"
        " a timer between pieces; caches are cold after each engine fill):"
    )
    pieces = [
        "_check(bitmask)",
        "bitmask[index, :]",
        'row.flags["C_CONTIGUOUS"]',
        "row.ctypes.data",
        "row.nbytes",
        "unsafe_compute_mask_ptr - engine",
        "sum (all pieces - engine)",
    ]
    acc = {k: [] for k in pieces}
    bm1 = np.zeros((1, words), dtype=np.int32)
    gc.disable()
    for c in chosen:
        mm = c["m_rs"]
        mm.reset()
        for t in c["walk"] + [None]:
            t0 = pc()
            if check:
                check(bm1)
            t1 = pc()
            r = bm1[0, :]
            t2 = pc()
            r.flags["C_CONTIGUOUS"]
            t3 = pc()
            p = r.ctypes.data
            t4 = pc()
            nb = r.nbytes
            t5 = pc()
            mm.unsafe_compute_mask_ptr(p, nb)
            t6 = pc()
            e = mm.last_mask_ns
            for k, v in zip(pieces, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5 - e, t6 - t0 - e)):
                acc[k].append(v)
            if t is None or not mm.consume_token(t):
                break
    gc.enable()
    for k in pieces:
        out(
            f"  {k:<44} median {us(med(acc[k])):7.3f} us  p99 {us(pct(acc[k], 99)):7.3f} us  "
            f"mean {us(sum(acc[k]) / len(acc[k])):7.3f} us"
        )
    out("\ndone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
