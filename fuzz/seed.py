#!/usr/bin/env python3
"""Writes seed corpora for the fuzz targets into fuzz/corpus/<target>/.

Sources: the grammar suites in grammars/tests/data (grammar + each accepted string), the
GBNF grammars and MaskBench schemas in ../shared/data (skipped with a message when absent),
and IR dumps written by `GRAMMARS_DUMP_IR=DIR cargo test -p grammars --test suite` when DIR
is given as the first argument. Each seed is `grammar NUL input`, the targets' format.
"""
import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data")
OUT = os.path.join(ROOT, "fuzz", "corpus")
LIMIT = 4096  # the targets ignore longer grammars


def put(target, grammar, inp=b""):
    if isinstance(grammar, str):
        grammar = grammar.encode()
    if isinstance(inp, str):
        inp = inp.encode()
    if len(grammar) > LIMIT or b"\0" in grammar:
        return 0
    data = grammar + b"\0" + inp[:64]
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
    return 1


def suite(path):
    """Cases of a grammars/tests/data file: (format, grammar, accepted strings)."""
    cases, cur, section = [], None, None
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line.startswith("=== "):
            last = line.split()[-1]
            fmt = last if last in ("lark", "regex", "gbnf") else None
            cur = {"fmt": fmt, "grammar": [], "accept": []}
            cases.append(cur)
            section = "grammar"
        elif cur is None:
            continue
        elif line.startswith("--- "):
            section = line[4:].strip()
        elif section == "grammar":
            cur["grammar"].append(line)
        elif section == "accept":
            cur["accept"].append(line)
    return [(c["fmt"], "\n".join(c["grammar"]).strip("\n") + "\n", c["accept"]) for c in cases]


def patterns(v):
    """The `pattern` strings anywhere in a schema."""
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "pattern" and isinstance(x, str):
                yield x
            else:
                yield from patterns(x)
    elif isinstance(v, list):
        for x in v:
            yield from patterns(x)


def main():
    n = {}
    data = os.path.join(ROOT, "grammars", "tests", "data")
    for name in ("lark", "regex", "gbnf"):
        for fmt, g, accept in suite(os.path.join(data, name + ".txt")):
            target = fmt or name
            if target not in ("lark", "regex", "gbnf"):
                continue
            if target == "regex":
                g = g.rstrip("\n")
            for a in accept or [""]:
                n[target] = n.get(target, 0) + put(target, g, a)
    gb = os.path.join(SHARED, "gbnf")
    if os.path.isdir(gb):
        for f in sorted(os.listdir(gb)):
            if f.endswith(".gbnf"):
                n["gbnf"] = n.get("gbnf", 0) + put("gbnf", open(os.path.join(gb, f), "rb").read())
    else:
        print(f"note: {gb} is missing; no GBNF seeds from ../shared", file=sys.stderr)
    mb = os.path.join(SHARED, "maskbench")
    if os.path.isdir(mb):
        for i, f in enumerate(sorted(os.listdir(mb))):
            if i % 8:
                continue
            try:
                d = json.load(open(os.path.join(mb, f), encoding="utf-8"))
            except (ValueError, OSError):
                continue
            schema = json.dumps(d.get("schema"), separators=(",", ":"))
            valid = [t for t in d.get("tests", []) if t.get("valid")]
            inp = json.dumps(valid[0]["data"], separators=(",", ":")) if valid else ""
            n["json_schema"] = n.get("json_schema", 0) + put("json_schema", schema, inp)
            for pat in patterns(d.get("schema")):
                n["regex"] = n.get("regex", 0) + put("regex", pat)
    else:
        print(f"note: {mb} is missing; no JSON Schema seeds from ../shared", file=sys.stderr)
    if len(sys.argv) > 1:
        for f in sorted(os.listdir(sys.argv[1])):
            ir = open(os.path.join(sys.argv[1], f), "rb").read()
            n["ir"] = n.get("ir", 0) + put("ir", ir)
    for k, v in sorted(n.items()):
        print(f"{k}: {v} seeds")


if __name__ == "__main__":
    main()
