#!/usr/bin/env python3
"""MaskBench, three engines side by side in one process: llg_rs (ours), the llguidance
wheel (LLGuidance 1.9.1) and xgrammar (XGrammar 0.2.8).

Per schema: TTFM (compile + first mask) with each engine; then every instance (valid and
invalid) is serialized compactly, tokenized once with llg_rs's tokenizer, and the same ids
are fed to all three engines: per token, a mask fill into a preallocated int32 bitmask and a
consume (TBM = mask + consume). XGrammar compiles run in a worker process with a timeout
(its compile time is measured there; the compiled grammar comes back serialized and is
deserialized untimed; the matcher + first fill are timed here).

Needs ../shared (MaskBench data, the Llama-3 tokenizer) and a venv with torch, xgrammar,
llguidance and llg_rs (see setup.sh). Exit status 2 when either is missing.
"""

import argparse
import gc
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared"))
ENGINES = ("ours", "llguidance", "xgrammar")
SPECIAL_WORDS = 128000 // 32  # words holding ids < 128000 (the ordinary Llama-3 tokens)


def die(msg):
    print(f"three_way.py: {msg}", file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------------------- xgrammar worker


def _xgr_worker(conn, tok_path, vocab_size, eos, max_threads):
    """Runs in a child process: compiles schemas sent over `conn`, answers
    ("ok", compile_s, serialized) or ("err", message)."""
    import xgrammar
    from transformers import PreTrainedTokenizerFast

    hf = PreTrainedTokenizerFast(tokenizer_file=tok_path)
    info = xgrammar.TokenizerInfo.from_huggingface(hf, vocab_size=vocab_size, stop_token_ids=[eos])
    conn.send(("ready",))
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        schema, kwargs = msg
        try:
            comp = xgrammar.GrammarCompiler(info, max_threads=max_threads, cache_enabled=False)
            t0 = time.perf_counter()
            cg = comp.compile_json_schema(schema, **kwargs)
            dt = time.perf_counter() - t0
            conn.send(("ok", dt, cg.serialize_json()))
        except Exception as e:  # compile errors of any kind
            conn.send(("err", f"{type(e).__name__}: {str(e)[:300]}"))


class XgrWorker:
    def __init__(self, tok_path, vocab_size, eos, max_threads):
        import multiprocessing as mp

        self.ctx = mp.get_context("spawn")
        self.args = (tok_path, vocab_size, eos, max_threads)
        self.proc = None
        self.restarts = 0

    def start(self):
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_xgr_worker, args=(child, *self.args), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        if not self.conn.poll(300):
            raise RuntimeError("xgrammar worker did not start")
        assert self.conn.recv() == ("ready",)

    def kill(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.join()
            self.proc = None

    def compile(self, schema, kwargs, timeout_s):
        """("ok", secs, serialized) | ("err", msg) | ("timeout",)"""
        if self.proc is None:
            self.start()
        self.conn.send((schema, kwargs))
        if not self.conn.poll(timeout_s):
            self.kill()
            self.restarts += 1
            return ("timeout",)
        try:
            return self.conn.recv()
        except EOFError:
            self.kill()
            self.restarts += 1
            return ("err", "xgrammar worker died")

    def close(self):
        if self.proc is not None:
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.proc.join(5)
            self.kill()


# ---------------------------------------------------------------------------- engines


class LlgEngine:
    """llg_rs or the llguidance wheel (same Python API)."""

    def __init__(self, mod, np_mod, tok_path):
        self.mod = mod
        self.tok = mod.LLTokenizer(tok_path)
        self.fill_fn = np_mod.fill_next_token_bitmask

    def compile(self, schema):
        """-> (state, ttfm_s, None) or (None, None, error)"""
        M = self.mod.LLMatcher
        t0 = time.perf_counter()
        try:
            g = M.grammar_from_json_schema(schema)
            m = M(self.tok, g, log_level=0)
        except Exception as e:
            return None, None, f"{type(e).__name__}: {str(e)[:300]}"
        t1 = time.perf_counter()
        if m.is_error():
            return None, None, m.get_error()[:300]
        pristine = m.deep_copy()  # untimed: each instance replays on a copy of this
        bm = self.bitmask
        t2 = time.perf_counter()
        self.fill_fn(m, bm, 0)
        t3 = time.perf_counter()
        if m.is_error():
            return None, None, m.get_error()[:300]
        return pristine, (t1 - t0) + (t3 - t2), None

    def matcher(self, state):
        return state.deep_copy()

    def run(self, m, toks, store):
        """Feeds toks; per token mask fill + consume. -> (mask_ns, consume_ns, n_ok, accepted,
        inconsistent) where store (steps x words array or None) receives each pre-token mask."""
        fill, bm = self.fill_fn, self.bitmask
        row = bm[0]
        pc = time.perf_counter_ns
        mask_ns, cons_ns = [], []
        inconsistent = 0
        for i, t in enumerate(toks):
            a = pc()
            fill(m, bm, 0)
            b = pc()
            ok = m.consume_token(t)
            c = pc()
            mask_ns.append(b - a)
            cons_ns.append(c - b)
            allowed = (int(row[t >> 5]) >> (t & 31)) & 1
            if store is not None:
                store[i] = row
            if allowed != ok:
                inconsistent += 1
            if not ok:
                return mask_ns, cons_ns, i, False, inconsistent
        return mask_ns, cons_ns, len(toks), bool(m.is_accepting() and not m.is_error()), inconsistent


class XgrEngine:
    def __init__(self, xgrammar, tok_path, vocab_size, eos, worker, timeout_s, kwargs):
        from transformers import PreTrainedTokenizerFast

        self.xgr = xgrammar
        self.hf = PreTrainedTokenizerFast(tokenizer_file=tok_path)
        self.info = xgrammar.TokenizerInfo.from_huggingface(
            self.hf, vocab_size=vocab_size, stop_token_ids=[eos]
        )
        self.eos = eos
        self.worker = worker
        self.timeout_s = timeout_s
        self.kwargs = kwargs
        self.bitmask = xgrammar.allocate_token_bitmask(1, vocab_size)
        self.row = self.bitmask.numpy()[0]

    def compile(self, schema):
        """-> (compiled, ttfm_s, None) or (None, None, error|'timeout')"""
        r = self.worker.compile(schema, self.kwargs, self.timeout_s)
        if r[0] == "timeout":
            return None, None, "timeout"
        if r[0] == "err":
            return None, None, r[1]
        _, compile_s, ser = r
        cg = self.xgr.CompiledGrammar.deserialize_json(ser, self.info)  # untimed
        t0 = time.perf_counter()
        m = self.xgr.GrammarMatcher(cg)
        m.fill_next_token_bitmask(self.bitmask)
        t1 = time.perf_counter()
        return cg, compile_s + (t1 - t0), None

    def matcher(self, cg):
        return self.xgr.GrammarMatcher(cg)

    def run(self, m, toks, store):
        bm, row = self.bitmask, self.row
        fill = m.fill_next_token_bitmask
        acc = m.accept_token
        pc = time.perf_counter_ns
        mask_ns, cons_ns = [], []
        inconsistent = 0
        for i, t in enumerate(toks):
            a = pc()
            fill(bm)
            b = pc()
            ok = acc(t)
            c = pc()
            mask_ns.append(b - a)
            cons_ns.append(c - b)
            allowed = (int(row[t >> 5]) >> (t & 31)) & 1
            if store is not None:
                store[i] = row
            if allowed != ok:
                inconsistent += 1
            if not ok:
                return mask_ns, cons_ns, i, False, inconsistent
        accepted = bool(m.accept_token(self.eos) and m.is_terminated())
        return mask_ns, cons_ns, len(toks), accepted, inconsistent


# ---------------------------------------------------------------------------- stats


def pct(np, v, p):
    return float(np.percentile(np.asarray(v, dtype=float), p)) if len(v) else float("nan")


def fmt(x, unit):
    if x != x:
        return "-"
    if unit == "ms":
        return f"{x:.2f}" if x < 100 else f"{x:.0f}"
    return f"{x:.1f}" if x < 1000 else f"{x:.0f}"


def ratio(a, b):
    return f"{a / b:.3g}" if b and b == b and a == a and b > 0 else "-"


def print_table(title, unit, rows, stats):
    """rows: {engine: {stat: value}}; prints each engine plus ours/llguidance, ours/xgrammar."""
    print(f"\n{title}")
    hdr = f"{'':<22}" + "".join(f"{s:>10}" for s in stats)
    print(hdr)
    for e in ENGINES:
        print(f"{e + ' (' + unit + ')':<22}" + "".join(f"{fmt(rows[e][s], unit):>10}" for s in stats))
    for other in ("llguidance", "xgrammar"):
        print(
            f"{'ours/' + other:<22}"
            + "".join(f"{ratio(rows['ours'][s], rows[other][s]):>10}" for s in stats)
        )


# ---------------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(
        description="MaskBench: llg_rs (ours) vs llguidance 1.9.1 vs xgrammar 0.2.8, one process, "
        "same token ids. TTFM = compile + first mask; TBM = mask fill + consume per token."
    )
    ap.add_argument("--shared", default=DEFAULT_SHARED, help="the shared/ folder (default: %(default)s)")
    ap.add_argument("--data", help="MaskBench folder (default: SHARED/data/maskbench)")
    ap.add_argument("--tokenizer", help="tokenizer.json (default: SHARED/tokenizers/llama3.tokenizer.json)")
    ap.add_argument("--every", type=int, default=20, help="every K-th file in sorted order (default 20)")
    ap.add_argument("--limit", type=int, default=0, help="at most N files (after --every; 0 = all)")
    ap.add_argument("--timeout-s", type=float, default=20.0,
                    help="per-schema xgrammar compile timeout, seconds (default 20)")
    ap.add_argument("--xgr-strict-mode", type=int, choices=(0, 1), default=1,
                    help="xgrammar compile_json_schema strict_mode (library default 1: no extra "
                    "properties/items beyond the schema's unless it allows them)")
    ap.add_argument("--xgr-threads", type=int, default=1, help="xgrammar GrammarCompiler max_threads (default 1)")
    ap.add_argument("--no-compare", action="store_true", help="skip the (untimed) mask comparison")
    ap.add_argument("--out", help="write per-schema results as TSV to this file")
    ap.add_argument("--show-diffs", type=int, default=5, help="mask-difference examples to print per pair")
    args = ap.parse_args()
    if args.every < 1:
        ap.error("--every must be >= 1")

    data = args.data or os.path.join(args.shared, "data", "maskbench")
    tok_path = args.tokenizer or os.path.join(args.shared, "tokenizers", "llama3.tokenizer.json")
    if not os.path.isdir(data) or not os.path.isfile(tok_path):
        die(f"needs ../shared: MaskBench folder {data!r} or tokenizer {tok_path!r} is missing "
            "(pass --shared / --data / --tokenizer)")
    missing = []
    try:
        import numpy as np
    except ImportError:
        missing.append("numpy")
    for name in ("torch", "transformers", "xgrammar", "llguidance", "llg_rs"):
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        die(f"missing Python package(s): {', '.join(missing)} (see setup.sh in {HERE})")
    import llg_rs
    import llg_rs.numpy
    import llguidance
    import llguidance.numpy
    import xgrammar

    from importlib.metadata import version

    vers = {n: version(n) for n in ("llg_rs", "llguidance", "xgrammar")}
    if vers["xgrammar"] != "0.2.8" or vers["llguidance"] != "1.9.1":
        print(f"warning: xgrammar {vers['xgrammar']}, llguidance {vers['llguidance']} "
              "(expected 0.2.8, 1.9.1)", file=sys.stderr)

    files = sorted(f for f in os.listdir(data) if f.endswith(".json"))[:: args.every]
    if args.limit:
        files = files[: args.limit]

    ours = LlgEngine(llg_rs, llg_rs.numpy, tok_path)
    ref = LlgEngine(llguidance, llguidance.numpy, tok_path)
    vocab = ours.tok.vocab_size
    eos = ours.tok.eos_token
    words = (vocab + 31) // 32
    for e in (ours, ref):
        e.bitmask = np.full((1, words), -1, dtype=np.int32)
    xkw = {"any_whitespace": True, "strict_mode": bool(args.xgr_strict_mode)}
    worker = XgrWorker(tok_path, vocab, eos, args.xgr_threads)
    worker.start()
    xgr = XgrEngine(xgrammar, tok_path, vocab, eos, worker, args.timeout_s, xkw)
    eng = {"ours": ours, "llguidance": ref, "xgrammar": xgr}

    print(f"# {len(files)} schemas (every {args.every}th of {data}), tokenizer {tok_path}")
    print(f"# llg_rs {vers['llg_rs']}, llguidance {vers['llguidance']}, "
          f"xgrammar {vers['xgrammar']} compile_json_schema({xkw}) max_threads={args.xgr_threads} "
          f"cache_enabled=False, timeout {args.timeout_s:g} s; vocab {vocab}, EOS {eos}")

    # per-schema results
    recs = []
    # pooled token times (mask+consume, ns) over valid instances all three accepted
    tbm = {e: {"all": [], "first": [], "later": []} for e in ENGINES}
    mask_only = {e: [] for e in ENGINES}
    outcome = {e: {"compiled": 0, "compile_error": 0, "timeout": 0, "valid_rejected": 0,
                   "invalid_accepted": 0, "mask_consume_inconsistent": 0} for e in ENGINES}
    n_valid = n_invalid = n_tok_mismatch_llg = n_tok_mismatch_hf = 0
    n_inst_all_valid_accepted = 0
    diffs = {"llguidance": [0, 0, []], "xgrammar": [0, 0, []]}  # [steps differing, steps, examples]
    errors = {e: [] for e in ENGINES}
    t_start = time.time()

    for fi, fname in enumerate(files):
        with open(os.path.join(data, fname), encoding="utf-8") as fh:
            d = json.load(fh)
        schema = json.dumps(d["schema"])
        tests = d.get("tests", [])
        gc.collect()
        rec = {"file": fname, "n_valid": sum(1 for t in tests if t["valid"]),
               "n_invalid": sum(1 for t in tests if not t["valid"])}
        state = {}
        for e in ENGINES:
            st, ttfm, err = eng[e].compile(schema)
            if st is None:
                kind = "timeout" if err == "timeout" else "compile_error"
                outcome[e][kind] += 1
                rec[e + "_status"] = kind
                if kind == "compile_error":
                    errors[e].append((fname, err))
            else:
                outcome[e]["compiled"] += 1
                rec[e + "_status"] = "ok"
                rec[e + "_ttfm_ms"] = ttfm * 1e3
                if e == "xgrammar":  # XGrammar's own estimate of its compiled grammar (untimed)
                    rec["xgrammar_mem_kib"] = st.memory_size_bytes / 1024
                state[e] = st
            rec[e + "_first_mask_ms"] = 0.0
            rec[e + "_valid_rejected"] = 0
            rec[e + "_invalid_accepted"] = 0
            rec[e + "_tokens"] = 0
        rec["tbm_us"] = {e: [] for e in ENGINES}
        for ii, t in enumerate(tests):
            text = json.dumps(t["data"], separators=(",", ":"), ensure_ascii=False)
            toks = ours.tok.tokenize_str(text)
            if ref.tok.tokenize_str(text) != toks:
                n_tok_mismatch_llg += 1
            if xgr.hf.encode(text, add_special_tokens=False) != toks:
                n_tok_mismatch_hf += 1
            valid = bool(t["valid"])
            n_valid += valid
            n_invalid += not valid
            res = {}
            compare = valid and not args.no_compare and len(state) == 3
            gc.disable()
            for e in ENGINES:
                if e not in state:
                    continue
                m = eng[e].matcher(state[e])
                store = np.empty((len(toks), words), dtype=np.int32) if compare else None
                mk, cs, n_ok, acc, inc = eng[e].run(m, toks, store)
                res[e] = (mk, cs, n_ok, acc, store)
                outcome[e]["mask_consume_inconsistent"] += inc
                if ii == 0:
                    rec[e + "_first_mask_ms"] = sum(mk) / 1e6
                rec[e + "_tokens"] += len(mk)
                if valid and not acc:
                    outcome[e]["valid_rejected"] += 1
                    rec[e + "_valid_rejected"] += 1
                if not valid and acc:
                    outcome[e]["invalid_accepted"] += 1
                    rec[e + "_invalid_accepted"] += 1
            gc.enable()
            if valid and len(res) == 3 and all(r[3] for r in res.values()):
                n_inst_all_valid_accepted += 1
                for e in ENGINES:
                    mk, cs = res[e][0], res[e][1]
                    tt = [a + b for a, b in zip(mk, cs)]
                    tbm[e]["all"] += tt
                    tbm[e]["first" if ii == 0 else "later"] += tt
                    mask_only[e] += mk
                    rec["tbm_us"][e] += tt
                if compare:
                    a = res["ours"][4][:, :SPECIAL_WORDS]
                    for other in ("llguidance", "xgrammar"):
                        b = res[other][4][:, :SPECIAL_WORDS]
                        neq = np.nonzero((a != b).any(axis=1))[0]
                        diffs[other][0] += len(neq)
                        diffs[other][1] += len(toks)
                        if len(neq) and len(diffs[other][2]) < args.show_diffs:
                            s = int(neq[0])
                            pa = int(np.unpackbits(a[s].view(np.uint8)).sum())
                            pb = int(np.unpackbits(b[s].view(np.uint8)).sum())
                            before = ours.tok.decode_str(toks[:s])[-40:]
                            diffs[other][2].append((fname, ii, s, pa, pb, before))
        recs.append(rec)
        if (fi + 1) % 25 == 0:
            print(f"# ... {fi + 1}/{len(files)} schemas, {time.time() - t_start:.0f} s", file=sys.stderr)
    worker.close()
    elapsed = time.time() - t_start

    # ------------------------------------------------------------------ report
    common = [r for r in recs if all(r[e + "_status"] == "ok" for e in ENGINES)]
    print(f"\n# {len(recs)} schemas, {n_valid} valid + {n_invalid} invalid instances; "
          f"all three compiled {len(common)} schemas; {n_inst_all_valid_accepted} valid instances "
          f"accepted by all three; run {elapsed:.0f} s; xgrammar worker restarts {worker.restarts}")
    print(f"# tokenization (llg_rs ids): differs from llguidance's on {n_tok_mismatch_llg}, "
          f"from HF (transformers) on {n_tok_mismatch_hf} of {n_valid + n_invalid} instances")

    print("\nOutcomes (schemas; instances)")
    keys = ["compiled", "compile_error", "timeout", "valid_rejected", "invalid_accepted",
            "mask_consume_inconsistent"]
    print(f"{'':<12}" + "".join(f"{k:>{len(k) + 2}}" for k in keys))
    for e in ENGINES:
        print(f"{e:<12}" + "".join(f"{outcome[e][k]:>{len(k) + 2}}" for k in keys))
    print("(valid_rejected / invalid_accepted count instances of schemas the engine compiled; "
          "mask_consume_inconsistent = tokens where the mask bit and consume disagree)")

    st = ("p50", "p90", "p99", "max", "mean")
    q = {"p50": 50, "p90": 90, "p99": 99, "p99.9": 99.9, "max": 100}

    def stats(v, names):
        out = {}
        for s in names:
            out[s] = (sum(v) / len(v) if v else float("nan")) if s == "mean" else pct(np, v, q[s])
        return out

    rows = {e: stats([r[e + "_ttfm_ms"] for r in common], st) for e in ENGINES}
    print_table(f"TTFM, ms (compile + first mask; {len(common)} schemas all three compiled)", "ms", rows, st)
    for e in ENGINES:
        own = [r[e + "_ttfm_ms"] for r in recs if r[e + "_status"] == "ok"]
        print(f"  {e}: over its own {len(own)} compiled: p50 {pct(np, own, 50):.2f} ms, "
              f"p90 {pct(np, own, 90):.2f}, max {pct(np, own, 100):.1f}")

    st2 = ("mean", "p50", "p99", "p99.9", "max")
    for part, label in (("all", "all"), ("first", "first instance of a schema"),
                        ("later", "later instances")):
        rows = {e: stats([x / 1e3 for x in tbm[e][part]], st2) for e in ENGINES}
        print_table(f"TBM, µs (mask + consume per token; {label}; {len(tbm['ours'][part])} tokens, "
                    "valid instances all three accepted)", "µs", rows, st2)
    rows = {e: stats([x / 1e3 for x in mask_only[e]], st2) for e in ENGINES}
    print_table("Mask fill only, µs (same tokens as TBM all)", "µs", rows, st2)

    st3 = ("p50", "p90", "p99", "max")
    rows = {e: stats([r[e + "_ttfm_ms"] + r[e + "_first_mask_ms"] for r in common], st3) for e in ENGINES}
    print_table(f"Fresh-schema cost, ms (TTFM + the first instance's mask fills; {len(common)} schemas "
                "all three compiled)", "ms", rows, st3)

    if not args.no_compare:
        print("\nMask comparison (untimed; ids < 128000, pre-token masks of valid instances all three accepted)")
        for other in ("llguidance", "xgrammar"):
            nd, ns, ex = diffs[other]
            print(f"  ours vs {other}: {nd} of {ns} steps differ")
            for fname, ii, s, pa, pb, before in ex:
                print(f"    {fname} #{ii} step {s}: ours {pa} tokens, {other} {pb}; after …{before!r}")

    for e in ENGINES:
        if errors[e]:
            print(f"\n{e} compile errors ({len(errors[e])}), first 8:")
            for fname, err in errors[e][:8]:
                print(f"  {fname}: {err.splitlines()[0] if err else ''}"[:200])
    for e in ENGINES:
        for k, label in (("_valid_rejected", "valid instances rejected"),
                         ("_invalid_accepted", "invalid instances accepted")):
            fs = [f"{r['file']}({r[e + k]})" for r in recs if r[e + k]]
            if fs:
                print(f"\n{e}: {label} in {len(fs)} schemas: {' '.join(fs)}")
    tos = [r["file"] for r in recs if r["xgrammar_status"] == "timeout"]
    if tos:
        print(f"\nxgrammar timeouts ({len(tos)}): {' '.join(tos)}")
    mem = [r["xgrammar_mem_kib"] for r in recs if "xgrammar_mem_kib" in r]
    if mem:
        print(f"\nxgrammar CompiledGrammar.memory_size_bytes over {len(mem)} compiled schemas: "
              f"p50 {pct(np, mem, 50):.1f} KiB, p90 {pct(np, mem, 90):.1f} KiB, max {max(mem):.1f} KiB "
              "(ours and LLGuidance: peer-bench `cargo run --release --bin memory`)")

    if args.out:
        cols = ["file", "n_valid", "n_invalid"]
        for e in ENGINES:
            cols += [e + "_status", e + "_ttfm_ms", e + "_first_mask_ms", e + "_tokens",
                     e + "_valid_rejected", e + "_invalid_accepted", e + "_tbm_mean_us"]
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write("\t".join(cols) + "\n")
            for r in recs:
                for e in ENGINES:
                    v = r["tbm_us"][e]
                    r[e + "_tbm_mean_us"] = sum(v) / len(v) / 1e3 if v else ""
                vals = []
                for c in cols:
                    x = r.get(c, "")
                    vals.append(f"{x:.3f}" if isinstance(x, float) else str(x))
                fh.write("\t".join(vals) + "\n")
        print(f"\n# per-schema TSV: {args.out}")


if __name__ == "__main__":
    main()
