#!/usr/bin/env python3
"""Drives vLLM 0.33's guidance structured-output backend (unmodified) the way its engine
does, on CPU, and writes a transcript: every call on ``GuidanceGrammar`` and every mask row.

What runs is vLLM's own code: ``SamplingParams._validate_structured_outputs`` (the front
end's check, which calls ``validate_guidance_grammar``), ``StructuredOutputManager``'s
``grammar_init`` (async compile on its thread pool through ``GuidanceBackend.compile_grammar``),
``validate_tokens`` (the scheduler's draft check), ``grammar_bitmask`` (rows along the
scheduled draft tokens, accept, bonus row, rollback) and ``accept_tokens`` (after sampling).
Only ``StructuredOutputManager.__init__`` is skipped (it loads the model's tokenizer from a
``ModelConfig``): the driver sets the attributes it would set, with a ``SimpleNamespace``
standing for ``VllmConfig`` (the fields the manager and ``GuidanceBackend`` read) and the
real ``StructuredOutputsConfig(backend="guidance")``.

The "model" samples from the mask rows (``common.Sampler``): the planned text's canonical
tokens while allowed, then a seeded RNG. Drafts (num_speculative_tokens) are the planned
tokens, sometimes with an invalid id or a valid-but-unchosen byte token.

  # (a) the llguidance wheel
  python drive_vllm.py --mode record --out /tmp/vllm_wheel.json
  # (b) llguidance -> llg_rs, the same decisions
  PYTHONPATH=../compat/src python drive_vllm.py --mode replay --replay /tmp/vllm_wheel.json --out /tmp/vllm_llgrs.json
"""

import argparse
import json
import logging
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

KIND_TO_PARAMS = {
    "json": lambda s: {"json": s},
    "json_object": lambda s: {"json_object": True},
    "regex": lambda s: {"regex": s},
    "choice": lambda s: {"choice": s},
    "lark": lambda s: {"grammar": s},
    "gbnf": lambda s: {"grammar": s},
    "structural_tag": lambda s: {"structural_tag": json.dumps(s)},
}


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=["record", "replay"], default="record")
    ap.add_argument("--replay", help="transcript whose decisions to replay (--mode replay)")
    ap.add_argument("--out", required=True, help="transcript JSON to write")
    ap.add_argument("--tokenizer", default=C.DEFAULT_TOKENIZER)
    ap.add_argument("--maskbench", type=int, default=20, help="MaskBench schemas added to the hand-written requests")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--spec-tokens", type=int, default=2, help="num_speculative_tokens")
    ap.add_argument("--max-tokens", type=int, default=160)
    ap.add_argument("--max-num-seqs", type=int, default=64)
    return ap.parse_args(argv)


def make_manager(hf_tok, vocab, args):
    import torch
    from vllm.config.structured_outputs import StructuredOutputsConfig
    from vllm.v1.structured_output import StructuredOutputManager

    so_cfg = StructuredOutputsConfig(backend="guidance")
    model_config = SimpleNamespace(is_diffusion=False, skip_tokenizer_init=False, get_vocab_size=lambda: vocab)
    vllm_config = SimpleNamespace(
        structured_outputs_config=so_cfg,
        model_config=model_config,
        num_speculative_tokens=args.spec_tokens,
        scheduler_config=SimpleNamespace(max_num_seqs=args.max_num_seqs),
        parallel_config=SimpleNamespace(distributed_executor_backend="mp"),
    )
    mgr = StructuredOutputManager.__new__(StructuredOutputManager)
    # The attributes StructuredOutputManager.__init__ sets (vllm 0.33.0), without loading a
    # tokenizer from a ModelConfig; batches stay below fill_bitmask_parallel_threshold.
    mgr.backend = None
    mgr.backend_name = None
    mgr.reasoner_cls = None
    mgr.vllm_config = vllm_config
    mgr._use_async_grammar_compilation = True
    mgr._grammar_bitmask = None
    mgr._full_mask = torch.tensor(-1, dtype=torch.int32)
    mgr.fill_bitmask_parallel_threshold = 128
    mgr.executor = ThreadPoolExecutor(max_workers=1)
    mgr.tokenizer = hf_tok
    mgr.enable_in_reasoning = False
    return mgr, so_cfg, model_config


def instrument(g, rid, tr, tb):
    """Wraps the GuidanceGrammar methods the manager calls, recording each call."""
    orig = {n: getattr(g, n) for n in ("fill_bitmask", "accept_tokens", "validate_tokens", "rollback", "is_terminated")}
    stack = []  # tokens the matcher consumed, as far as the calls tell (for the context)

    def ctx():
        return tb.text(stack[-8:])[-40:]

    def fill_bitmask(bitmask, idx):
        ff = g.ll_matcher.compute_ff_tokens()  # probe (read-only): classifies differences
        orig["fill_bitmask"](bitmask, idx)
        tr.add(
            rid,
            "fill_bitmask",
            info={"idx": idx},  # the row in the batch: not compared (it moves as requests end)
            row=C.encode_row(bitmask[idx]),
            ff=list(ff[:8]),
            ctx=ctx(),
            state={"err": g.ll_matcher.is_error(), "stopped": g.ll_matcher.is_stopped()},
        )

    def accept_tokens(request_id, tokens):
        stopped = g.ll_matcher.is_stopped()
        r = orig["accept_tokens"](request_id, tokens)
        if r and not stopped:
            stack.extend(tokens)
        tr.add(rid, "accept_tokens", args={"tokens": list(tokens)}, ret=bool(r),
               state={"err": g.ll_matcher.is_error(), "terminated": g.terminated})
        return r

    def validate_tokens(tokens):
        r = orig["validate_tokens"](tokens)
        tr.add(rid, "validate_tokens", args={"tokens": list(tokens)}, ret=list(r))
        return r

    def rollback(n):
        orig["rollback"](n)
        if n > 0:
            del stack[max(0, len(stack) - n):]
        tr.add(rid, "rollback", args={"n": n}, state={"err": g.ll_matcher.is_error()})

    def is_terminated():
        r = orig["is_terminated"]()
        tr.add(rid, "is_terminated", ret=bool(r))
        return r

    for n, f in (("fill_bitmask", fill_bitmask), ("accept_tokens", accept_tokens),
                 ("validate_tokens", validate_tokens), ("rollback", rollback), ("is_terminated", is_terminated)):
        setattr(g, n, f)


def main(argv=None):
    args = parse_args(argv)
    if args.mode == "replay" and not args.replay:
        sys.exit("--mode replay needs --replay TRANSCRIPT")
    import torch  # noqa: F401
    from vllm.sampling_params import SamplingParams, StructuredOutputsParams
    from vllm.v1.structured_output.backend_guidance import serialize_guidance_grammar
    from vllm.v1.structured_output.request import StructuredOutputRequest

    # compile errors are in the transcript; vLLM would log each with its traceback
    logging.getLogger("vllm.v1.structured_output").setLevel(logging.CRITICAL)
    hf_tok = C.load_hf_tokenizer(args.tokenizer)
    tb = C.TokenBytes(hf_tok)
    eos = hf_tok.eos_token_id
    vocab = len(hf_tok)
    info = C.engine_info()
    print(f"drive_vllm: engine {info['engine']} ({info['llguidance_version']}, {info['llguidance_file']}), mode {args.mode}", flush=True)
    tr = C.Transcript("vllm", {**info, "args": vars(args), "vocab": vocab, "eos": eos, "vllm": __import__("vllm").__version__})
    sampler = C.Sampler(args.mode, args.seed, eos, hf_tok, args.replay)
    mgr, so_cfg, model_config = make_manager(hf_tok, vocab, args)

    reqs = C.hand_requests() + C.maskbench_requests(args.maskbench)
    states, requests = {}, {}
    t0 = time.time()
    for rid, kind, spec, text in reqs:
        st = C.new_state(rid, text, hf_tok, eos)
        states[rid] = st
        sp = SamplingParams(max_tokens=args.max_tokens, structured_outputs=StructuredOutputsParams(**KIND_TO_PARAMS[kind](spec)))
        # the front end's check (OpenAI server / LLM.generate), which calls validate_guidance_grammar
        try:
            sp._validate_structured_outputs(model_config, so_cfg, hf_tok)
            v = {"ok": True}
        except Exception as e:  # noqa: BLE001
            v = {"ok": False, "err": f"{type(e).__name__}: {e}"[:400]}
        tr.add(rid, "validate_request", args={"kind": kind}, ret=v)
        key = StructuredOutputRequest.from_sampling_params(sp).structured_output_key
        try:
            ser = serialize_guidance_grammar(key[0], key[1])
            tr.add(rid, "serialize_guidance_grammar", ret={"ok": True, "len": len(ser)}, info=ser[:300])
        except Exception as e:  # noqa: BLE001
            tr.add(rid, "serialize_guidance_grammar", ret={"ok": False, "err": f"{type(e).__name__}: {e}"[:400]})
        request = SimpleNamespace(
            request_id=rid,
            sampling_params=sp,
            structured_output_request=StructuredOutputRequest.from_sampling_params(sp),
            use_structured_output=True,
            all_token_ids=[],
            prompt_token_ids=[1, 2, 3],
        )
        # engine side; a request that failed validation never gets here in the server, but the
        # engine's compile error path is driven too (grammar errors raise "Grammar error: ...")
        mgr.grammar_init(request)
        requests[rid] = request
        if mgr.backend is not None and "backend" not in tr.data["meta"]:
            lt = mgr.backend.ll_tokenizer
            tr.data["meta"]["backend"] = {"ll_vocab_size": lt.vocab_size, "ll_eos": lt.eos_token}

    active = []
    for rid, *_ in reqs:
        sor = requests[rid].structured_output_request
        while not sor.is_grammar_ready:
            time.sleep(0.001)
        g = sor.grammar
        if isinstance(g, Exception):
            tr.add(rid, "compile", ret={"ok": False, "err": f"{type(g).__name__}: {g}"[:400]})
            states[rid]["done"] = "compile_error"
            continue
        tr.add(rid, "compile", ret={"ok": True})
        if not states[rid]["plan"]:
            states[rid]["done"] = "compiled_invalid_request"  # validation should have refused it
            continue
        instrument(g, rid, tr, tb)
        active.append(rid)
    print(f"  {len(reqs)} requests, {len(active)} compiled with a plan ({time.time() - t0:.1f} s)", flush=True)

    stride = args.spec_tokens + 1
    step = 0
    n_rows = 0
    while active and step < 10 * args.max_tokens:
        # the scheduler validates the drafts proposed after the previous step
        sched, drafts_of = {}, {}
        for rid in list(active):
            st = states[rid]
            if args.mode == "record":
                drafts = sampler.drafts(st, step, args.spec_tokens)
            else:
                rec = sampler.recorded(rid, step)
                if rec is None:
                    st["done"] = "diverged:no_recorded_step"
                    tr.add(rid, "diverged", args={"step": step, "why": "no recorded decision"})
                    active.remove(rid)
                    continue
                drafts = rec["drafts"]
            drafts_of[rid] = drafts
            if drafts:
                v = mgr.validate_tokens(requests[rid], list(drafts))
                if v:
                    sched[rid] = v
        if not active:
            break
        bm = mgr.grammar_bitmask(requests, list(active), sched)
        for gi, rid in enumerate(list(active)):
            st = states[rid]
            spec = sched.get(rid, [])
            rec = sampler.recorded(rid, step) if args.mode == "replay" else None
            picks = []
            i = 0
            diverged = None
            while True:
                bits = C.row_bits(bm[gi * stride + i])
                n_rows += 1
                if rec is None:
                    t = sampler.pick(st, step, i, bits)
                else:
                    if i >= len(rec["picks"]):
                        diverged = "more rows than recorded"
                        break
                    t = rec["picks"][i]
                    if not bits[t]:
                        diverged = f"recorded pick {t} not in this mask"
                        break
                picks.append(t)
                if i < len(spec) and t == spec[i]:
                    i += 1
                    continue
                break
            tr.add(rid, "decision", args={"step": step}, ret={"drafts": drafts_of[rid], "picks": picks})
            if diverged:
                st["done"] = "diverged"
                tr.add(rid, "diverged", args={"step": step, "why": diverged})
                active.remove(rid)
                continue
            accepted = list(spec[: len(picks) - 1]) + [picks[-1]]
            if eos in accepted:
                accepted = accepted[: accepted.index(eos) + 1]
            ok = mgr.accept_tokens(requests[rid], accepted)
            requests[rid].all_token_ids.extend(accepted)
            st["out"].extend(accepted)
            done = None
            if not ok:
                done = "grammar_rejected"
            elif eos in accepted:
                done = "eos"
            elif len(st["out"]) >= args.max_tokens:
                done = "length"
            tr.add(rid, "step_result", args={"step": step}, ret={"accepted": accepted, "ok": bool(ok), "done": done})
            if done:
                st["done"] = done
                active.remove(rid)
        step += 1

    summary = {rid: {"done": st["done"], "n_out": len(st["out"]), "on_plan": st["on_plan"],
                     "text": tb.text([t for t in st["out"] if t != eos])[:300]} for rid, st in states.items()}
    tr.data["summary"] = summary
    tr.data["meta"]["steps"] = step
    tr.data["meta"]["rows_sampled"] = n_rows
    tr.data["meta"]["wall_s"] = round(time.time() - t0, 2)
    tr.save(args.out)
    n_fill = sum(1 for e in tr.data["events"] if e["op"] == "fill_bitmask")
    dones = {}
    for s in summary.values():
        dones[s["done"]] = dones.get(s["done"], 0) + 1
    print(f"  {step} steps, {n_fill} fill_bitmask rows, {len(tr.data['events'])} events; finished: {dones}", flush=True)
    print(f"  transcript: {args.out} ({time.time() - t0:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
