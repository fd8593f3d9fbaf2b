#!/usr/bin/env python3
"""Compares two driver transcripts (the llguidance wheel's, then llg_rs's replay of the same
decisions) call by call and mask row by mask row, and sorts every difference into a class.

Classes of mask-row differences:
  a-forced-bytes   the grammar forces the next bytes: the wheel's row holds only the first
                   of compute_ff_tokens(), ours also other tokens whose bytes are a prefix of
                   (or extend) the forced bytes;
  b-minus-zero     after "-" in a JSON integer: ours allows tokens starting with "0"
                   (LLGuidance rejects "-0"); b-minus-zero:sign: ours allows the "-" itself
                   where the bounds leave only -0 (e.g. minimum 0);
  c-key-escape     only the wheel allows tokens that make a \\uXXXX or \\/ escape (inside a
                   free object key, documented: ours does not);
  d-email-rfc5321  format: email: ours also allows RFC 5321 quoted local parts (\"...\"@)
                   and address literals (@[...]) (BENCHMARKS.md, deliberate difference 7);
  e-hostname-label-63  only the wheel allows dash runs making a hostname label longer
                   than 63 characters (RFC 1123; BENCHMARKS.md, deliberate difference 8);
  other            anything else (listed with examples).
Other differences: compile/validation outcome, return values (accept_tokens,
validate_tokens, is_terminated, step results), matcher state after a call, and requests
where the replay diverged (the wheel's next decision impossible on ours).

  python compare.py /tmp/vllm_wheel.json /tmp/vllm_llgrs.json [--json report.json]
"""

import argparse
import json
import os
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402


def load(path):
    with open(path) as fh:
        return json.load(fh)


def by_rid(data):
    out = defaultdict(list)
    for ev in data["events"]:
        out[ev["rid"]].append(ev)
    return out


def classify_row(ea, eb, A, B, tb):
    """A, B: bool arrays (wheel, ours). Returns (class, detail)."""
    only_a = [int(i) for i in (A & ~B).nonzero()[0]]
    only_b = [int(i) for i in (B & ~A).nonzero()[0]]
    ff = ea.get("ff") or []
    ctx = ea.get("ctx", "")
    detail = {
        "n_wheel": int(A.sum()),
        "n_ours": int(B.sum()),
        "only_wheel": [(t, tb.text([t])) for t in only_a[:8]],
        "only_ours": [(t, tb.text([t])) for t in only_b[:8]],
        "n_only_wheel": len(only_a),
        "n_only_ours": len(only_b),
        "ff": [(t, tb.text([t])) for t in ff[:4]],
        "ctx": ctx,
    }
    if not only_a and only_b and ff and int(A.sum()) == 1 and A[ff[0]]:
        forced = b"".join(tb(t) for t in ff)
        if all(forced.startswith(tb(t)) or tb(t).startswith(forced) for t in only_b):
            return "a-forced-bytes", detail
        return "a?-forced-bytes-unverified", detail
    if not only_a and only_b and ctx.endswith("-") and all(tb(t).startswith(b"0") for t in only_b):
        return "b-minus-zero", detail
    if not only_a and only_b and all(
        tb(t).rstrip().endswith(b"-") and not any(48 <= c <= 57 for c in tb(t)) for t in only_b
    ):
        # a sign where the bounds leave only -0 (e.g. minimum 0): ours allows it, LLGuidance not
        return "b-minus-zero:sign", detail
    if only_a and not only_b:
        tail = ctx[-2:]

        def makes_escape(t):
            s = (tail + tb(t).decode("utf-8", "replace"))
            # an escape the token starts or completes: \u or \/ at or after the context end
            for k in range(len(s) - 1):
                if s[k] == "\\" and s[k + 1] in "u/" and k + 1 >= len(tail):
                    return True
            return False

        if all(makes_escape(t) for t in only_a):
            return "c-key-escape", detail
    if not only_a and only_b:
        def email_extra(t):
            x = tb(t).lstrip(b' "')
            return x.startswith(b"\\") or (x.startswith(b"[") and ctx.endswith("@"))

        if all(email_extra(t) for t in only_b):
            # format: email per RFC 5321: quoted local parts (\"...\"@) and address literals
            return "d-email-rfc5321", detail
    if only_a and not only_b and all(tb(t) and not tb(t).strip(b"-") for t in only_a):
        # dash runs that would make a hostname label longer than 63 characters (RFC 1123)
        return "e-hostname-label-63", detail
    return "other", detail


def compare(pa, pb, tb_tok=None, examples=3):
    a, b = load(pa), load(pb)
    tok_path = (a["meta"].get("args") or {}).get("tokenizer") or C.DEFAULT_TOKENIZER
    tb = C.TokenBytes(tb_tok or C.load_hf_tokenizer(tok_path))
    nbits = int(a["meta"].get("vocab") or len(tb.tok))
    ga, gb = by_rid(a), by_rid(b)
    counts = Counter()
    ex = defaultdict(list)
    rows_compared = rows_same = 0
    calls_compared = 0
    per_rid = {}
    for rid in list(ga) + [r for r in gb if r not in ga]:
        la, lb = ga.get(rid, []), gb.get(rid, [])
        n = min(len(la), len(lb))
        rid_rows = rid_diff = 0
        diverged = None
        for i in range(n):
            ea, eb = la[i], lb[i]
            if ea["op"] != eb["op"] or ea.get("args") != eb.get("args"):
                diverged = f"call {i}: wheel {ea['op']}{ea.get('args', '')} vs ours {eb['op']}{eb.get('args', '')}"
                break
            calls_compared += 1
            op = ea["op"]
            if "row" in ea:
                rows_compared += 1
                rid_rows += 1
                if ea["row"]["h"] == eb["row"]["h"]:
                    rows_same += 1
                else:
                    rid_diff += 1
                    A = C.decode_row(ea["row"], nbits)
                    B = C.decode_row(eb["row"], nbits)
                    cls, det = classify_row(ea, eb, A, B, tb)
                    counts["row:" + cls] += 1
                    if len(ex["row:" + cls]) < examples:
                        ex["row:" + cls].append({"rid": rid, "seq": ea["seq"], **det})
            if op in ("validate_request", "serialize_guidance_grammar", "compile", "dispatch"):
                oa, ob = ea.get("ret", {}).get("ok"), eb.get("ret", {}).get("ok")
                if oa != ob:
                    cls = f"{op}: wheel {'ok' if oa else 'error'}, ours {'ok' if ob else 'error'}"
                    counts[cls] += 1
                    ex[cls].append({"rid": rid, "wheel": ea.get("ret"), "ours": eb.get("ret")})
                continue
            if op != "decision" and ea.get("ret") != eb.get("ret"):
                cls = f"return:{op}"
                counts[cls] += 1
                if len(ex[cls]) < examples:
                    ex[cls].append({"rid": rid, "seq": ea["seq"], "args": ea.get("args"), "wheel": ea.get("ret"), "ours": eb.get("ret")})
            if ea.get("state") != eb.get("state"):
                cls = f"state:{op}"
                counts[cls] += 1
                if len(ex[cls]) < examples:
                    ex[cls].append({"rid": rid, "seq": ea["seq"], "wheel": ea.get("state"), "ours": eb.get("state")})
        if diverged is None and len(la) != len(lb):
            longer = "wheel" if len(la) > len(lb) else "ours"
            extra = (la if len(la) > len(lb) else lb)[n]
            diverged = f"call {n}: only {longer} goes on ({extra['op']} {extra.get('args', '')})"
        if diverged:
            counts["request diverged"] += 1
            ex["request diverged"].append({"rid": rid, "where": diverged})
        per_rid[rid] = {"rows": rid_rows, "rows_differ": rid_diff, "diverged": diverged}
    return {
        "wheel": {k: a["meta"].get(k) for k in ("engine", "llguidance_version", "llguidance_file")},
        "ours": {k: b["meta"].get(k) for k in ("engine", "llguidance_version", "llguidance_file", "llg_rs_version")},
        "driver": a.get("driver"),
        "requests": len(per_rid),
        "calls_compared": calls_compared,
        "rows_compared": rows_compared,
        "rows_same": rows_same,
        "counts": dict(sorted(counts.items())),
        "examples": ex,
        "per_request": per_rid,
    }


def print_report(r, examples=2):
    print(f"== {r['driver']}: wheel {r['wheel']['llguidance_version']} vs {r['ours']['engine']} {r['ours'].get('llg_rs_version')}")
    print(f"requests {r['requests']}, calls compared {r['calls_compared']}, mask rows compared {r['rows_compared']}, identical {r['rows_same']}")
    if not r["counts"]:
        print("no differences")
    w = max([len(k) for k in r["counts"]] + [10])
    for k, v in r["counts"].items():
        print(f"  {k:<{w}}  {v:5d}")
    for k, v in r["examples"].items():
        print(f"-- {k}:")
        for e in v[:examples]:
            print("   ", json.dumps(e, ensure_ascii=False)[:600])


def main(argv=None):
    ap = argparse.ArgumentParser(description="Compare two driver transcripts (wheel first, then llg_rs).")
    ap.add_argument("wheel")
    ap.add_argument("ours")
    ap.add_argument("--json", help="write the full report here")
    ap.add_argument("--examples", type=int, default=2)
    args = ap.parse_args(argv)
    r = compare(args.wheel, args.ours, examples=max(3, args.examples))
    print_report(r, args.examples)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(r, fh, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
