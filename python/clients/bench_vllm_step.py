#!/usr/bin/env python3
"""Per-step cost inside vLLM 0.33's guidance backend: llg_rs (through the `llguidance`
shim) against the llguidance wheel, 64 MaskBench requests in one batch.

Each engine runs in its own process (the parent starts them, alternating: wheel, llg_rs,
llg_rs, wheel, ... for --rounds); ``llguidance`` resolves to llg_rs there through
``PYTHONPATH=python/compat/src``. What is timed is vLLM's own ``GuidanceGrammar`` (from
``GuidanceBackend.compile_grammar``, whitespace-flexible JSON as vLLM serializes it):
``fill_bitmask(bitmask, i)`` and then ``accept_tokens(req_id, [token])`` per request per
step, the tokens being each schema's first valid instance (``json.dumps``) in canonical
tokenization, then EOS. Continuous batching: a request that reaches its EOS is replaced by a
fresh grammar of the same schema (compiled beforehand, as vLLM compiles off the step path),
so every step fills and accepts for all 64 rows.

Schemas: a seeded shuffle of MaskBench; kept when both engines compile them and the instance
walks in both (the path is cut where either engine's mask refuses the next token).

  python bench_vllm_step.py                     # selects, then 2 rounds x 2 engines
  python bench_vllm_step.py --steps 300 --rounds 3
"""

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common as C  # noqa: E402

COMPAT = os.path.join(os.path.dirname(HERE), "compat", "src")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=64, help="requests in the batch")
    ap.add_argument("--candidates", type=int, default=110, help="MaskBench schemas tried (seeded shuffle)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=200, help="batch steps timed per round")
    ap.add_argument("--rounds", type=int, default=2, help="rounds; each runs both engines (ABBA order)")
    ap.add_argument("--max-path", type=int, default=400, help="cut instances longer than this many tokens")
    ap.add_argument("--tokenizer", default=C.DEFAULT_TOKENIZER)
    ap.add_argument("--json", help="write all figures here")
    # internal: a child process
    ap.add_argument("--child", choices=["select", "time"], help=argparse.SUPPRESS)
    ap.add_argument("--io", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


# ------------------------------------------------------------------ child side


def make_backend(hf_tok):
    from vllm.config.structured_outputs import StructuredOutputsConfig
    from vllm.v1.structured_output.backend_guidance import GuidanceBackend

    cfg = SimpleNamespace(structured_outputs_config=StructuredOutputsConfig(backend="guidance"))
    return GuidanceBackend(cfg, tokenizer=hf_tok, vocab_size=len(hf_tok))


def compile_json(backend, schema_text):
    from vllm.v1.structured_output.backend_types import StructuredOutputOptions

    return backend.compile_grammar(StructuredOutputOptions.JSON, schema_text)


def child_select(io):
    """Compiles each candidate and walks its instance: how far the mask allows it."""
    import logging

    logging.getLogger("vllm").setLevel(logging.CRITICAL)
    hf_tok = C.load_hf_tokenizer(io["tokenizer"])
    backend = make_backend(hf_tok)
    bm = backend.allocate_token_bitmask(1)
    out = []
    for name, schema_text, path in io["candidates"]:
        try:
            g = compile_json(backend, schema_text)
        except Exception as e:  # noqa: BLE001
            out.append({"name": name, "ok": False, "err": str(e)[:200]})
            continue
        n = 0
        for t in path:
            g.fill_bitmask(bm, 0)
            if not (int(bm[0, t // 32]) >> (t % 32)) & 1:
                break
            if not g.accept_tokens(name, [t]):
                break
            n += 1
        out.append({"name": name, "ok": True, "walk": n})
    return {"engine": C.engine_info(), "results": out}


def child_time(io):
    import logging

    logging.getLogger("vllm").setLevel(logging.CRITICAL)
    pc = time.perf_counter_ns
    hf_tok = C.load_hf_tokenizer(io["tokenizer"])
    backend = make_backend(hf_tok)
    reqs = io["requests"]  # [name, schema_text, path]
    steps = io["steps"]
    n = len(reqs)
    bm = backend.allocate_token_bitmask(n)
    # grammars compiled beforehand: enough for each request to restart `steps` / len times
    t0 = pc()
    pools, compile_ns = [], []
    for name, schema_text, path in reqs:
        k = steps // len(path) + 2
        pool = []
        for _ in range(k):
            a = pc()
            pool.append(compile_json(backend, schema_text))
            compile_ns.append(pc() - a)
        pools.append(pool)
    t_compile = (pc() - t0) / 1e9
    cur = [pool.pop() for pool in pools]
    pos = [0] * n
    fill_ns, acc_ns, call_ns, step_ns, step_wall_ns, engine_ns = [], [], [], [], [], []
    # llg_rs reports the engine's own time of the last mask: the rest of fill_bitmask is the
    # Python path (vLLM's wrapper, llguidance.torch, the binding)
    has_engine_ns = hasattr(cur[0].ll_matcher, "last_mask_ns")
    gc.collect()
    gc.disable()
    for _ in range(steps):
        s_sum = 0
        w0 = pc()
        for i in range(n):
            g = cur[i]
            t = reqs[i][2][pos[i]]
            a = pc()
            g.fill_bitmask(bm, i)
            b = pc()
            g.accept_tokens(reqs[i][0], [t])
            c = pc()
            fill_ns.append(b - a)
            if has_engine_ns:
                engine_ns.append(g.ll_matcher.last_mask_ns)
            acc_ns.append(c - b)
            call_ns.append(c - a)
            s_sum += c - a
        step_wall_ns.append(pc() - w0)
        step_ns.append(s_sum)
        # requests that accepted their EOS are replaced (not timed: vLLM does this between steps)
        for i in range(n):
            pos[i] += 1
            if pos[i] >= len(reqs[i][2]):
                cur[i] = pools[i].pop()
                pos[i] = 0
    gc.enable()
    return {
        "engine": C.engine_info(),
        "compile_ns": compile_ns,
        "compile_s": t_compile,
        "fill_ns": fill_ns,
        "accept_ns": acc_ns,
        "call_ns": call_ns,
        "step_ns": step_ns,
        "step_wall_ns": step_wall_ns,
        "engine_ns": engine_ns,
        "loadavg": os.getloadavg(),
    }


# ------------------------------------------------------------------ parent side


def run_child(kind, engine, io):
    env = dict(os.environ)
    pp = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.abspath(p) != COMPAT]
    if engine == "llg_rs":
        pp = [COMPAT] + pp
    env["PYTHONPATH"] = os.pathsep.join(pp)
    with tempfile.TemporaryDirectory() as d:
        inp, outp = os.path.join(d, "in.json"), os.path.join(d, "out.json")
        with open(inp, "w") as fh:
            json.dump(io, fh)
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", kind, "--io", inp + ":" + outp],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            sys.exit(f"child {kind}/{engine} failed:\n{r.stdout[-3000:]}")
        with open(outp) as fh:
            res = json.load(fh)
    want = "llg_rs" if engine == "llg_rs" else "llguidance-wheel"
    if res["engine"]["engine"] != want:
        sys.exit(f"child {engine}: llguidance resolved to {res['engine']}")
    return res


def pct(xs, q):
    s = sorted(xs)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, int(-(-q * len(s) // 100)) - 1))
    return s[k]


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        inp, outp = args.io.split(":")
        with open(inp) as fh:
            io = json.load(fh)
        res = child_select(io) if args.child == "select" else child_time(io)
        with open(outp, "w") as fh:
            json.dump(res, fh)
        return 0

    hf_tok = C.load_hf_tokenizer(args.tokenizer)
    eos = hf_tok.eos_token_id
    cands = []
    for name, kind, schema, text in C.maskbench_requests(args.candidates, seed=args.seed):
        path = hf_tok.encode(text, add_special_tokens=False)[: args.max_path] + [eos]
        cands.append([name, json.dumps(schema), path])
    print(f"bench_vllm_step: {len(cands)} candidate MaskBench schemas (seed {args.seed}); cpus {os.cpu_count()}, "
          f"loadavg {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    sel = {e: run_child("select", e, {"tokenizer": args.tokenizer, "candidates": cands}) for e in ("wheel", "llg_rs")}
    chosen, n_fail, n_short = [], {"wheel": 0, "llg_rs": 0}, 0
    for i, (name, schema_text, path) in enumerate(cands):
        rw, rr = sel["wheel"]["results"][i], sel["llg_rs"]["results"][i]
        for e, r in (("wheel", rw), ("llg_rs", rr)):
            if not r["ok"]:
                n_fail[e] += 1
        if not (rw["ok"] and rr["ok"]):
            continue
        walk = min(rw["walk"], rr["walk"])
        if walk < len(path):
            n_short += 1
            if walk < 2:
                continue
            path = path[:walk]  # no EOS: the request restarts after its last allowed token
        if len(chosen) < args.n:
            chosen.append([name, schema_text, path])
    print(f"  compile failures: wheel {n_fail['wheel']}, llg_rs {n_fail['llg_rs']}; instances cut where a mask "
          f"refused them: {n_short}; using {len(chosen)} requests, path lengths "
          f"{min(len(c[2]) for c in chosen)}..{max(len(c[2]) for c in chosen)} tokens "
          f"(mean {sum(len(c[2]) for c in chosen) / len(chosen):.1f})", flush=True)

    io = {"tokenizer": args.tokenizer, "requests": chosen, "steps": args.steps}
    runs = {"wheel": [], "llg_rs": []}
    order = []
    for r in range(args.rounds):
        order += ["wheel", "llg_rs"] if r % 2 == 0 else ["llg_rs", "wheel"]
    for e in order:
        res = run_child("time", e, io)
        runs[e].append(res)
        print(f"  {e:7s}: step p50 {pct(res['step_ns'], 50) / 1e3:9.1f} us, loadavg {res['loadavg'][0]:.2f}", flush=True)

    def pool(e, key):
        return [x for r in runs[e] for x in r[key]]

    ver = runs["wheel"][0]["engine"]["llguidance_version"]
    rs_ver = runs["llg_rs"][0]["engine"]["llg_rs_version"]
    rows = [
        ("fill_bitmask per call, p50 / p99 (us)", "fill_ns", 1e3),
        ("accept_tokens per call, p50 / p99 (us)", "accept_ns", 1e3),
        ("fill + accept per call, p50 / p99 (us)", "call_ns", 1e3),
        (f"batch step, {len(chosen)} requests, p50 / p99 (ms)", "step_ns", 1e6),
        ("compile_grammar, p50 / p99 (ms)", "compile_ns", 1e6),
    ]
    print(f"\nvLLM {__import__('vllm').__version__} GuidanceGrammar, {len(chosen)} requests x {args.steps} steps x "
          f"{args.rounds} rounds per engine, llama3 tokenizer")
    print(f"| figure | llg_rs {rs_ver} | llguidance {ver} | ratio p50 / p99 |")
    print("|---|---|---|---|")
    figures = {}
    for label, key, div in rows:
        a, b = pool("llg_rs", key), pool("wheel", key)
        a50, a99, b50, b99 = pct(a, 50) / div, pct(a, 99) / div, pct(b, 50) / div, pct(b, 99) / div
        figures[key] = {"llg_rs": [a50, a99], "wheel": [b50, b99], "n": [len(a), len(b)]}
        print(f"| {label} | {a50:.3g} / {a99:.3g} | {b50:.3g} / {b99:.3g} | {a50 / b50:.2f}x / {a99 / b99:.2f}x |")
    eng = pool("llg_rs", "engine_ns")
    if eng:
        over = [f - e for f, e in zip(pool("llg_rs", "fill_ns"), eng)]
        print(f"| llg_rs fill_bitmask: engine time (last_mask_ns) / the rest, p50 (us) | {pct(eng, 50) / 1e3:.3g} / "
              f"{pct(over, 50) / 1e3:.3g} | - | - |")
    tot = {e: sum(pool(e, "step_ns")) / len(runs[e]) / 1e9 for e in runs}
    print(f"| all steps, per round (s) | {tot['llg_rs']:.3f} | {tot['wheel']:.3f} | {tot['llg_rs'] / tot['wheel']:.2f}x |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "requests": [c[0] for c in chosen], "figures": figures,
                       "per_round_total_s": tot}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
