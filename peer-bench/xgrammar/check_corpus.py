#!/usr/bin/env python3
"""Checks a structural-tag corpus (grammars/tests/data/structural_tag.txt) against XGrammar.

Usage: check_corpus.py [--help] [CORPUS]

For each `=== title structural_tag` case, compiles the structural tag with the `xgrammar`
wheel and checks every `--- accept` line is accepted and every `--- reject` line rejected
(byte-level: `GrammarMatcher.accept_string` then termination). Cases whose title contains
`(ours` state where we deliberately differ and are only reported. `--- error` cases expect a
compile error. Exit status 0 when XGrammar agrees with every case not marked `(ours`, 1 when
it does not, 2 when xgrammar is missing.
"""
import json
import sys


def cases(path):
    case = None
    section = None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("=== "):
            if case:
                yield case
            title, _, kind = line[4:].rpartition(" ")
            case = {"title": title, "kind": kind, "src": None, "accept": [], "reject": [], "error": None}
            section = "src"
        elif case is None:
            continue
        elif line.startswith("--- "):
            section = line[4:].strip()
        elif section == "src" and line.strip():
            case["src"] = line
        elif section in ("accept", "reject") and line:
            case[section].append(json.loads(line) if line.startswith('"') else line)
        elif section == "error" and line.strip():
            case["error"] = line
    if case:
        yield case


def main():
    args = sys.argv[1:]
    if "--help" in args or "-h" in args:
        print(__doc__)
        return 0
    path = args[0] if args else "grammars/tests/data/structural_tag.txt"
    try:
        import xgrammar as xgr
        from xgrammar.testing import _is_grammar_accept_string
    except ImportError as e:
        print(f"xgrammar is not installed: {e}", file=sys.stderr)
        return 2
    bad = 0
    for c in cases(path):
        if c["kind"] != "structural_tag":
            continue
        ours = "(ours" in c["title"]
        try:
            src = json.loads(c["src"])
            if "structures" in src:  # the legacy form: XGrammar's deprecated (tags, triggers) call
                items = [xgr.StructuralTagItem(begin=t["begin"], schema=json.dumps(t["schema"]), end=t["end"])
                         for t in src["structures"]]
                g = xgr.Grammar.from_structural_tag(items, src["triggers"])
            else:
                g = xgr.Grammar.from_structural_tag(c["src"])
        except Exception as e:  # noqa: BLE001 - any compile failure is an outcome
            if c["error"] is None:
                print(f"{'note' if ours else 'DIFF'}: {c['title']}: xgrammar error {str(e)[:200]}")
                bad += not ours
            continue
        if c["error"] is not None:
            print(f"{'note' if ours else 'DIFF'}: {c['title']}: xgrammar compiles, we expect an error")
            bad += not ours
            continue
        try:
            _is_grammar_accept_string(g, "")
        except Exception:  # noqa: BLE001 - token formats need a vocabulary
            print(f"skip: {c['title']}: needs a tokenizer")
            continue
        for want, texts in ((True, c["accept"]), (False, c["reject"])):
            for t in texts:
                got = _is_grammar_accept_string(g, t)
                if got != want:
                    print(f"{'note' if ours else 'DIFF'}: {c['title']}: {t!r} xgrammar {'accepts' if got else 'rejects'}")
                    bad += not ours
    print("agree" if bad == 0 else f"{bad} disagreements")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
