#!/usr/bin/env python3
"""Tabulate TestPriorFailures' JSON lines (policy/recipe/prior_failures_test.go).

    bench/prior-failures.py FILE.jsonl...

Per task: programs, invalid, timed out, and the invalid ones whose cause is
none of the grammar's deliberate failure modes (a loader that does not fit the
file, raw strings or NaN given to a model, sparse input to a dense-only
model, predict_proba on a model without it, negative features to naive
Bayes; see the recipe package doc and TestFailureModes) nor the time limit:
those are grammar bugs.
"""
import collections
import json
import re
import sys

DELIBERATE = [
    (r"UnicodeDecodeError: 'ascii'", "ascii loader"),
    (r"ParserError: Error tokenizing", "sniff loader"),
    (r"^KeyError: '[^'\[]*'$|^KeyError: \"None of \[Index", "semicolon loader (no target column)"),
    (r"could not convert string to float", "raw columns"),
    (r"Input X contains NaN|Input contains NaN|does not accept missing values", "NaN to a model without NaN"),
    (r"dense data is required", "sparse to a dense-only model"),
    (r"has no attribute 'predict_proba'|predict_proba is not available", "no predict_proba"),
    (r"Negative values in data passed to", "negative features to naive Bayes"),
]


def cause(r):
    if r.get("timed_out"):
        return "timed out", "timeout"
    e = r.get("error") or ""
    for pat, name in DELIBERATE:
        if re.search(pat, e):
            return name, "deliberate"
    return re.sub(r"'[^']*'", "'…'", e)[:100], "bug"


def main(paths):
    by = collections.OrderedDict()
    for p in paths:
        for line in open(p):
            r = json.loads(line)
            by.setdefault(r["task"], []).append(r)
    print("| task | programs | invalid | timed out | deliberate | other (grammar bugs) | other causes |")
    print("|---|---|---|---|---|---|---|")
    for task, rs in by.items():
        n = len(rs)
        kinds = collections.Counter()
        bugs = collections.Counter()
        for r in rs:
            if not r.get("valid"):
                name, kind = cause(r)
                kinds[kind] += 1
                if kind == "bug":
                    bugs[name] += 1
        bad = sum(kinds.values())
        top = "; ".join(f"{k} ({v})" for k, v in bugs.most_common(3))
        print(f"| {task} | {n} | {bad} ({100 * bad / n:.0f}%) | {kinds['timeout']} | {kinds['deliberate']} | "
              f"{kinds['bug']} ({100 * kinds['bug'] / n:.0f}%) | {top} |")


if __name__ == "__main__":
    main(sys.argv[1:])
