#!/usr/bin/env python3
"""Drives SGLang 0.5.23's llguidance grammar backend (unmodified) the way its scheduler
does, on CPU, and writes a transcript: every grammar call and every mask row.

What runs is SGLang's own code: ``GuidanceBackend`` (the LLTokenizer built from the HF
tokenizer with a list of EOS ids), ``get_cached_or_future_value`` / ``set_cache`` (compile
on the backend's thread pool, cache, ``copy()`` = ``LLMatcher.deep_copy`` for a repeated
grammar key, ``InvalidGrammarObject`` for a grammar error), ``SamplingBatchInfo.
update_regex_vocab_mask`` (``allocate_vocab_mask``, ``fill_vocab_mask_batched`` =
``fill_next_token_bitmask_par`` on the shared ``LLExecutor``, ``move_vocab_mask``),
``GrammarMask.apply`` (``apply_token_bitmask_inplace`` on CPU logits), ``accept_token`` /
``is_terminated`` as the batch result processor calls them, EAGLE's draft-tree walk
(``spec_utils.generate_token_bitmask``: ``accept_token``, ``fill_vocab_mask``,
``rollback(1)``), the native draft-chain fill (``fill_token_bitmask_with_draft_tokens`` =
``fill_next_token_bitmask_par_with_draft_tokens``) and ``try_jump_forward``
(``compute_ff_tokens``). Steps cycle through plain decode, a draft tree and a draft chain.

  python drive_sglang.py --mode record --out /tmp/sglang_wheel.json
  PYTHONPATH=../compat/src python drive_sglang.py --mode replay --replay /tmp/sglang_wheel.json --out /tmp/sglang_llgrs.json
"""

import argparse
import json
import os
import sys
import time
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402


def key_of(kind, spec):
    """The (key_type, key_string) SGLang's grammar manager builds for a request."""
    if kind == "json":
        return ("json", json.dumps(spec))
    if kind == "json_object":  # the OpenAI adapter's response_format json_object
        return ("json", '{"type": "object"}')
    if kind == "regex":
        return ("regex", spec)
    if kind == "choice":  # no choice constraint in SGLang: an EBNF alternation
        return ("ebnf", "root ::= " + " | ".join(json.dumps(s) for s in spec))
    if kind in ("lark", "gbnf"):
        return ("ebnf", spec)
    if kind == "structural_tag":
        return ("structural_tag", json.dumps(spec))
    raise ValueError(kind)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=["record", "replay"], default="record")
    ap.add_argument("--replay", help="transcript whose decisions to replay (--mode replay)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokenizer", default=C.DEFAULT_TOKENIZER)
    ap.add_argument("--maskbench", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=160)
    return ap.parse_args(argv)


def instrument(g, rid, tr, tb, stack):
    orig = {n: getattr(g, n) for n in ("accept_token", "rollback", "fill_vocab_mask", "is_terminated", "try_jump_forward")}

    def ctx():
        return tb.text(stack[-8:])[-40:]

    def accept_token(token):
        stopped = g.ll_matcher.is_stopped()
        try:
            orig["accept_token"](token)
        except ValueError as e:
            tr.add(rid, "accept_token", args={"token": token}, ret={"raised": "ValueError", "msg_head": str(e)[:80]},
                   state={"finished": g.finished, "err": g.ll_matcher.is_error()})
            raise
        if not stopped:
            stack.append(token)
        tr.add(rid, "accept_token", args={"token": token}, ret=None,
               state={"finished": g.finished, "err": g.ll_matcher.is_error(), "stopped": g.ll_matcher.is_stopped()})

    def rollback(n):
        fin = g.finished
        orig["rollback"](n)
        k = n - 1 if fin else n
        if k > 0:
            del stack[max(0, len(stack) - k):]
        tr.add(rid, "rollback", args={"n": n}, state={"finished": g.finished, "err": g.ll_matcher.is_error()})

    def fill_vocab_mask(vocab_mask, idx):
        ff = g.ll_matcher.compute_ff_tokens()
        orig["fill_vocab_mask"](vocab_mask, idx)
        tr.add(rid, "fill_vocab_mask", info={"idx": int(idx)}, row=C.encode_row(vocab_mask[idx]), ff=list(ff[:8]), ctx=ctx())

    def is_terminated():
        r = orig["is_terminated"]()
        tr.add(rid, "is_terminated", ret=bool(r))
        return r

    def try_jump_forward(tokenizer):
        r = orig["try_jump_forward"](tokenizer)
        tr.add(rid, "try_jump_forward", ret=None if r is None else list(r[0]))
        return r

    for n, f in (("accept_token", accept_token), ("rollback", rollback), ("fill_vocab_mask", fill_vocab_mask),
                 ("is_terminated", is_terminated), ("try_jump_forward", try_jump_forward)):
        setattr(g, n, f)
    return ctx


def main(argv=None):
    args = parse_args(argv)
    if args.mode == "replay" and not args.replay:
        sys.exit("--mode replay needs --replay TRANSCRIPT")
    import torch
    from sglang.srt.constrained import llguidance_backend as LB
    from sglang.srt.constrained.base_grammar_backend import InvalidGrammarObject
    from sglang.srt.sampling.sampling_batch_info import SamplingBatchInfo
    from sglang.srt.speculative.spec_utils import generate_token_bitmask

    hf_tok = C.load_hf_tokenizer(args.tokenizer)
    tb = C.TokenBytes(hf_tok)
    eos = hf_tok.eos_token_id
    eos_ids = {eos, hf_tok.convert_tokens_to_ids("<|end_of_text|>")}
    vocab = len(hf_tok)
    info = C.engine_info()
    print(f"drive_sglang: engine {info['engine']} ({info['llguidance_version']}, {info['llguidance_file']}), mode {args.mode}", flush=True)
    tr = C.Transcript("sglang", {**info, "args": vars(args), "vocab": vocab, "eos": eos, "eos_ids": sorted(eos_ids),
                                 "sglang": __import__("sglang").__version__})
    sampler = C.Sampler(args.mode, args.seed, eos, hf_tok, args.replay)

    t0 = time.time()
    backend = LB.GuidanceBackend(tokenizer=hf_tok, any_whitespace=True, whitespace_pattern=None,
                                 n_vocab=vocab, eos_token_ids=eos_ids)
    lt = backend.llguidance_tokenizer
    tr.data["meta"]["backend"] = {"ll_vocab_size": lt.vocab_size, "ll_eos": lt.eos_token, "ll_eos_tokens": list(lt.eos_tokens)}
    try:
        buf = backend.initialize_vocab_mask_buffer("drive_sglang", vocab, 8, "cpu")
        tr.add("_", "initialize_vocab_mask_buffer", ret={"shape": list(buf.shape)})
    except Exception as e:  # noqa: BLE001  (needs the scheduler's runtime context)
        tr.add("_", "initialize_vocab_mask_buffer", ret={"skipped": type(e).__name__})

    reqs = C.hand_requests() + C.maskbench_requests(args.maskbench)
    # repeated grammar keys: the second request gets the cached template's copy()
    reqs += [(rid + "#2", kind, spec, text) for rid, kind, spec, text in reqs if rid in ("json-person", "regex-id", "lark-sql")]
    states, grammars, ctxs = {}, {}, {}
    pending = []
    for rid, kind, spec, text in reqs:
        st = C.new_state(rid, text, hf_tok, eos)
        states[rid] = st
        key = key_of(kind, spec)
        value, hit = backend.get_cached_or_future_value(key, False)
        tr.add(rid, "get_cached_or_future_value", args={"key_type": key[0]}, ret={"cache_hit": hit})
        pending.append((rid, key, value, hit))
        if not hit:
            # the grammar manager waits for the future, then caches a copy
            g = value.result()
            backend.set_cache(key, g.copy())
            pending[-1] = (rid, key, g, hit)
    active = []
    for rid, key, g, hit in pending:
        st = states[rid]
        if isinstance(g, InvalidGrammarObject):
            tr.add(rid, "dispatch", ret={"ok": False, "err": f"Failed to compile {key[0]} grammar: {g.error_message}"[:400]})
            st["done"] = "invalid_grammar"
            continue
        tr.add(rid, "dispatch", ret={"ok": True, "type": type(g).__name__})
        if not st["plan"]:
            st["done"] = "compiled_invalid_request"
            continue
        stack = []
        ctxs[rid] = instrument(g, rid, tr, tb, stack)
        grammars[rid] = g
        active.append(rid)
    print(f"  {len(reqs)} requests, {len(active)} compiled with a plan ({time.time() - t0:.1f} s)", flush=True)

    def finish(rid, why):
        states[rid]["done"] = why
        active.remove(rid)

    def accept_all(rid, tokens):
        """batch_result_processor: accept each token, stop at the one that terminates."""
        g = grammars[rid]
        st = states[rid]
        kept = []
        try:
            for t in tokens:
                g.accept_token(t)
                kept.append(t)
                if g.is_terminated():
                    break
        except ValueError:
            st["out"].extend(kept)
            return "grammar_rejected"
        st["out"].extend(kept)
        if any(t in eos_ids for t in kept):
            return "eos"
        if len(st["out"]) >= args.max_tokens:
            return "length"
        return None

    step = 0
    n_rows = 0
    while active and step < 10 * args.max_tokens:
        mode = ("decode", "tree", "chain")[step % 3]
        batch = list(active)
        decisions = {}
        if args.mode == "replay":
            for rid in batch:
                rec = sampler.recorded(rid, step)
                if rec is None or rec.get("mode") != mode:
                    tr.add(rid, "diverged", args={"step": step, "why": "no recorded decision"})
                    finish(rid, "diverged:no_recorded_step")
            batch = list(active)
            if not batch:
                break
        for rid in batch:
            grammars[rid].try_jump_forward(hf_tok)

        if mode == "decode":
            ff = {rid: list(grammars[rid].ll_matcher.compute_ff_tokens()[:8]) for rid in batch}
            info_ns = SimpleNamespace(grammars=[grammars[r] for r in batch], temperatures=[1.0] * len(batch),
                                      vocab_size=vocab, device="cpu")
            SamplingBatchInfo.update_regex_vocab_mask(info_ns)
            gm = info_ns.grammar_mask
            logits = torch.zeros((len(batch), vocab), dtype=torch.float32)
            gm.apply(logits)
            for i, rid in enumerate(batch):
                st = states[rid]
                row = gm.vocab_mask[i]
                bits = C.row_bits(row)
                fin = torch.isfinite(logits[i]).numpy()
                tr.add(rid, "fill_vocab_mask_batched", info={"row": i}, row=C.encode_row(row), ff=ff[rid], ctx=ctxs[rid](),
                       ret={"apply_matches_mask": bool((fin == bits[:vocab]).all())})
                n_rows += 1
                if args.mode == "record":
                    t = sampler.pick(st, step, 0, fin)
                else:
                    t = sampler.recorded(rid, step)["picks"][0]
                    if not fin[t]:
                        tr.add(rid, "decision", args={"step": step}, ret={"mode": mode, "picks": [t]})
                        tr.add(rid, "diverged", args={"step": step, "why": f"recorded pick {t} not in this mask"})
                        finish(rid, "diverged")
                        continue
                tr.add(rid, "decision", args={"step": step}, ret={"mode": mode, "picks": [t]})
                done = accept_all(rid, [t])
                tr.add(rid, "step_result", args={"step": step}, ret={"accepted": [t], "done": done})
                if done:
                    finish(rid, done)

        elif mode == "tree":
            nd = 4  # node 0: the last verified token; 1 -> 2: two drafts; 3: sibling of 1
            rows = {}
            for rid in batch:
                st = states[rid]
                if args.mode == "record":
                    d = sampler.drafts(st, step, 2)
                    r = sampler.rng(rid, step, "alt")
                    alt = r.randrange(vocab) if r.random() < 0.5 else eos
                else:
                    rec = sampler.recorded(rid, step)
                    d, alt = rec["drafts"], rec["alt"]
                d = (list(d) + [eos, eos])[:2]
                decisions[rid] = {"drafts": d, "alt": alt}
            nxt = torch.tensor([[1, 2, -1, -1]] * len(batch), dtype=torch.int64)
            sib = torch.tensor([[-1, 3, -1, -1]] * len(batch), dtype=torch.int64)
            last = [states[r]["out"][-1] if states[r]["out"] else 0 for r in batch]
            drafts = torch.tensor([[last[i], decisions[r]["drafts"][0], decisions[r]["drafts"][1], decisions[r]["alt"]]
                                   for i, r in enumerate(batch)], dtype=torch.int64)
            reqs_ns = [SimpleNamespace(grammar=grammars[r]) for r in batch]
            bm, _ = generate_token_bitmask(reqs_ns, nxt, sib, drafts, vocab)
            for i, rid in enumerate(batch):
                st = states[rid]
                rows_i = bm[i * nd:(i + 1) * nd]
                n_rows += nd  # the filled rows are recorded by fill_vocab_mask (with their context)
                picks, node, div = [], 0, None
                rec = sampler.recorded(rid, step) if args.mode == "replay" else None
                while True:
                    bits = C.row_bits(rows_i[node])
                    if rec is None:
                        t = sampler.pick(st, step, len(picks), bits)
                    else:
                        if len(picks) >= len(rec["picks"]):
                            div = "more rows than recorded"
                            break
                        t = rec["picks"][len(picks)]
                        if not bits[t]:
                            div = f"recorded pick {t} not in this mask"
                            break
                    picks.append(t)
                    child = int(nxt[i, node])
                    nxt_node = None
                    while child != -1:
                        if int(drafts[i, child]) == t:
                            nxt_node = child
                            break
                        child = int(sib[i, child])
                    if nxt_node is None or t in eos_ids:
                        break
                    node = nxt_node
                tr.add(rid, "decision", args={"step": step}, ret={"mode": mode, **decisions[rid], "picks": picks})
                if div:
                    tr.add(rid, "diverged", args={"step": step, "why": div})
                    finish(rid, "diverged")
                    continue
                done = accept_all(rid, picks)
                tr.add(rid, "step_result", args={"step": step}, ret={"accepted": picks, "done": done})
                if done:
                    finish(rid, done)

        else:  # chain: the native draft-chain fill (DFlash)
            entries, base, rows_of = [], 0, {}
            ff = {rid: list(grammars[rid].ll_matcher.compute_ff_tokens()[:8]) for rid in batch}
            for rid in batch:
                st = states[rid]
                if args.mode == "record":
                    d = sampler.drafts(st, step, 2)
                else:
                    d = sampler.recorded(rid, step)["drafts"]
                decisions[rid] = {"drafts": d}
                rows_of[rid] = (base, len(d) + 1)
                if d:
                    entries.append(LB.GrammarDraftRow(base_row=base, grammar=grammars[rid], draft_tokens=list(d)))
                base += len(d) + 1
            vm = LB.allocate_token_bitmask(base, lt.vocab_size)
            LB.fill_token_bitmask_with_draft_tokens(entries, vm)
            single = [LB.GrammarRow(row=rows_of[r][0], grammar=grammars[r]) for r in batch if not decisions[r]["drafts"]]
            if single:
                LB.GuidanceGrammar.fill_vocab_mask_batched(single, vm)
            for rid in batch:
                st = states[rid]
                b0, n = rows_of[rid]
                d = decisions[rid]["drafts"]
                for j in range(n):
                    tr.add(rid, "draft_chain_row", args={"j": j, "drafts": d}, row=C.encode_row(vm[b0 + j]),
                           ff=ff[rid] if j == 0 else [], ctx=(ctxs[rid]() + tb.text(d[:j]))[-40:])
                    n_rows += 1
                picks, div = [], None
                rec = sampler.recorded(rid, step) if args.mode == "replay" else None
                for j in range(n):
                    bits = C.row_bits(vm[b0 + j])
                    if rec is None:
                        t = sampler.pick(st, step, j, bits)
                    else:
                        if j >= len(rec["picks"]):
                            div = "more rows than recorded"
                            break
                        t = rec["picks"][j]
                        if not bits[t]:
                            div = f"recorded pick {t} not in this mask"
                            break
                    picks.append(t)
                    if j >= len(d) or t != d[j] or t in eos_ids:
                        break
                tr.add(rid, "decision", args={"step": step}, ret={"mode": mode, **decisions[rid], "picks": picks})
                if div:
                    tr.add(rid, "diverged", args={"step": step, "why": div})
                    finish(rid, "diverged")
                    continue
                done = accept_all(rid, picks)
                tr.add(rid, "step_result", args={"step": step}, ret={"accepted": picks, "done": done})
                if done:
                    finish(rid, done)
        step += 1

    summary = {rid: {"done": st["done"], "n_out": len(st["out"]), "on_plan": st["on_plan"],
                     "text": tb.text([t for t in st["out"] if t not in eos_ids])[:300]} for rid, st in states.items()}
    tr.data["summary"] = summary
    tr.data["meta"]["steps"] = step
    tr.data["meta"]["rows"] = n_rows
    tr.data["meta"]["wall_s"] = round(time.time() - t0, 2)
    tr.save(args.out)
    dones = {}
    for s in summary.values():
        dones[s["done"]] = dones.get(s["done"], 0) + 1
    print(f"  {step} steps, {n_rows} mask rows, {len(tr.data['events'])} events; finished: {dones}", flush=True)
    print(f"  transcript: {args.out} ({time.time() - t0:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
