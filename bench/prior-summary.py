#!/usr/bin/env python3
"""Summarise bench/run-prior.sh results (JSON lines) as Markdown.

    bench/prior-summary.py bench/results/prior-*.jsonl
    bench/prior-summary.py --by-choice FILE.jsonl...   # failure rate per plan choice, all tasks pooled
    bench/prior-summary.py --compare A.jsonl B.jsonl   # the same per choice, A's tasks against B's

Per task: programs, invalid (share), timed out, invalid other than by timing
out, and the failure causes. A cause is the error's last line with ids, column
lists and numbers folded away, so the same mistake on different data counts
once; CAUSES below names the common ones after the grammar decision that
usually makes them (a guess from the message, check the program's plan).
"""
import collections
import json
import re
import sys

CAUSES = [
    (r"timed out", "timed out"),
    (r"UnicodeDecodeError: 'ascii'", "ascii loader on non-ASCII data (read.loader=ascii)"),
    (r"ParserError: Error tokenizing", "CSV parser error (read.loader=semicolon on text with ';')"),
    (r"^KeyError: '[^\[]|^KeyError: \"None of \[Index", "target column missing after reading (read.loader=semicolon?)"),
    # The error field keeps the message's ends, so a long list of one-hot
    # column names ('col_value', ...) may be all that is left of it.
    (r"KeyError: .*not in index|KeyError: '\[|KeyError: \"\[|^\\?', \\?'|^[^ ]*\\', \\'", "columns differ between train and test (get_dummies per file)"),
    (r"are not unique in dataframe", "a column selected twice (a TRUE/FALSE column is both numeric and categorical)"),
    (r"Found array with 0 feature", "no feature columns left"),
    (r"y should be a 1d array", "several targets given to a one-target model"),
    (r"could not convert string to float", "strings given to the model (features.columns=raw)"),
    (r"does not accept missing values|Input X contains NaN|Input contains NaN", "NaN given to a model that takes none (features.missing=none)"),
    (r"has no attribute 'predict_proba'", "predict_proba on a model without it"),
    (r"Negative values in data passed to", "negative features to a naive Bayes model"),
    (r"sparse", "sparse matrix to a dense-only step"),
    (r"MemoryError|Unable to allocate|memory", "out of memory"),
]


def clean(err):
    e = re.sub(r"^no submission.csv written \(exit code -?\d+: ", "", err or "")
    e = re.sub(r"\)$", "", e)
    return e


def cause(err):
    e = clean(err)
    for pat, name in CAUSES:
        if re.search(pat, e):
            return name
    e = re.sub(r"'[^']*'", "'…'", e)
    e = re.sub(r"\d+(\.\d+)?", "N", e)
    return e[:120]


def main(paths):
    by = collections.OrderedDict()
    for p in paths:
        with open(p) as f:
            for line in f:
                r = json.loads(line)
                by.setdefault(r.get("task"), []).append(r)
    print("| task | programs | invalid | timed out | invalid, not timed out | valid: median s | best valid score | top causes of invalid programs |")
    print("|---|---|---|---|---|---|---|---|")
    for task, rs in by.items():
        n = len(rs)
        bad = [r for r in rs if not r.get("valid")]
        to = [r for r in bad if r.get("timed_out")]
        durs = sorted(r.get("duration_s", 0) for r in rs if r.get("valid"))
        med = f"{durs[len(durs) // 2]:.0f}" if durs else "-"
        # reward is the score, negated when lower is better (CONTRACT.md §4)
        good = [r for r in rs if r.get("valid")]
        best = f"{max(good, key=lambda r: r['reward'])['score']:.4g}" if good else "-"
        c = collections.Counter(cause(r.get("error")) for r in bad)
        top = "; ".join(f"{k} ({v})" for k, v in c.most_common(4))
        print(f"| {task} | {n} | {len(bad)} ({100 * len(bad) / n:.0f}%) | {len(to)} | "
              f"{len(bad) - len(to)} ({100 * (len(bad) - len(to)) / n:.0f}%) | {med} | {best} | {top} |")


def choice_rates(paths):
    n = collections.Counter()
    bad = collections.Counter()
    for p in paths:
        with open(p) as f:
            for line in f:
                r = json.loads(line)
                failed = not r.get("valid") and not r.get("timed_out")
                for kv in (r.get("plan") or "").split(";"):
                    if "=" in kv:
                        n[kv] += 1
                        bad[kv] += failed
    return n, bad


def compare(a, b, least=5):
    """Choices drawn at least `least` times in both files, by how much more
    often they fail (not by time-out) in a than in b."""
    na, ba = choice_rates([a])
    nb, bb = choice_rates([b])
    rows = []
    for k in na:
        if na[k] >= least and nb[k] >= least:
            ra, rb = ba[k] / na[k], bb[k] / nb[k]
            rows.append((ra - rb, k, na[k], ra, nb[k], rb))
    rows.sort(reverse=True)
    print(f"| plan choice | programs in {a} | invalid, not timed out | programs in {b} | invalid, not timed out |")
    print("|---|---|---|---|---|")
    for d, k, ca, ra, cb, rb in rows[:15]:
        if d < 0.2:
            break
        print(f"| `{k}` | {ca} | {100 * ra:.0f}% | {cb} | {100 * rb:.0f}% |")


def by_choice(paths, least=6):
    """Per decision=value over all programs: how many, and the share invalid
    for a reason other than the time limit; the highest first."""
    n = collections.Counter()
    bad = collections.Counter()
    for p in paths:
        with open(p) as f:
            for line in f:
                r = json.loads(line)
                failed = not r.get("valid") and not r.get("timed_out")
                for kv in (r.get("plan") or "").split(";"):
                    if "=" in kv:
                        n[kv] += 1
                        bad[kv] += failed
    rows = sorted((bad[k] / n[k], n[k], k) for k in n if n[k] >= least)
    print("| plan choice | programs | invalid, not timed out |")
    print("|---|---|---|")
    for rate, cnt, k in reversed(rows):
        if rate < 0.3:
            break
        print(f"| `{k}` | {cnt} | {100 * rate:.0f}% |")


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args == ["--by-choice"]:
        sys.exit("usage: prior-summary.py [--by-choice] RESULTS.jsonl...")
    if args[0] == "--by-choice":
        by_choice(args[1:])
    elif args[0] == "--compare" and len(args) == 3:
        compare(args[1], args[2])
    else:
        main(args)
