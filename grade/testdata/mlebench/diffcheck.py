"""Differential check of grade's MLE-bench rule sets against MLE-bench itself.

    SEED=5 /usr/bin/python3 diffcheck.py MLEBENCH_SRC OUT_DIR N
    MLERL_MLEBENCH_DIFF=OUT_DIR go test ./grade -run TestMLEBenchDiffCheck

For every competition with golden cases (this folder), writes N submissions
made by mutating its valid golden cases at random (rows dropped, repeated or
swapped, cells replaced by NA words, text, numbers, infinities; columns
dropped, added, reordered, upper-cased; a pandas index column; a missing
header; values scaled or rounded), grades each with MLE-bench's own
grade.py (through golden.py's shims), and writes OUT_DIR/<id>/expected.json.
The Go test then grades the same files against the golden answers and
reports every disagreement.
"""

import csv
import glob
import importlib
import io
import json
import os
import random
import sys

src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
gold = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, gold)
import golden  # noqa: E402 - installs the scikit-learn shims
sys.path.insert(0, src)
from mlebench.utils import read_csv  # noqa: E402
rng = random.Random(int(os.environ.get("SEED", "11")))
CELLS = ["", "NA", "nan", "abc", "1e3", "-1", "2", "0.5", " 0.5", "inf", "True", "0", "1", "-0.0", "1.0", "null", "#N/A", "3.7", "x y"]
def mutate(text):
    rows = list(csv.reader(io.StringIO(text)))
    if not rows: return text
    kind = rng.randrange(14)
    h, body = rows[0], rows[1:]
    if kind == 0 and body: body.pop(rng.randrange(len(body)))
    elif kind == 1 and body: body.insert(rng.randrange(len(body)+1), list(rng.choice(body)))
    elif kind == 2 and len(body) > 1:
        i, j = rng.randrange(len(body)), rng.randrange(len(body)); body[i], body[j] = body[j], body[i]
    elif kind in (3, 4, 5) and body:
        r = rng.choice(body)
        if r: r[rng.randrange(len(r))] = rng.choice(CELLS)
    elif kind == 6 and len(h) > 1:
        j = rng.randrange(len(h)); h.pop(j); [r.pop(j) for r in body if len(r) > j]
    elif kind == 7:
        h.append(rng.choice(["extra", h[0]])); [r.append(rng.choice(CELLS)) for r in body]
    elif kind == 8 and len(h) > 1:
        perm = list(range(len(h))); rng.shuffle(perm); h = [h[p] for p in perm]; body = [[r[p] for p in perm] for r in body if len(r) == len(perm)]
    elif kind == 9:
        h = [""] + h; body = [[str(i)] + r for i, r in enumerate(body)]
    elif kind == 10:
        h = [x.upper() if rng.random() < 0.5 else x for x in h]
    elif kind == 11 and body:
        h, body = body[0], body[1:]
    elif kind in (12, 13):
        def f(x):
            try:
                v = float(x)
            except ValueError:
                return x
            return repr(v * 100) if kind == 12 else ("%.2f" % v)
        col = rng.randrange(len(h))
        body = [[f(c) if j == col else c for j, c in enumerate(r)] for r in body]
    o = io.StringIO(); w = csv.writer(o, lineterminator="\n"); w.writerow(h); w.writerows(body); return o.getvalue()
for d in sorted(glob.glob(os.path.join(gold, "*", "expected.json"))):
    cid = os.path.basename(os.path.dirname(d))
    grade_fn = importlib.import_module(f"mlebench.competitions.{cid}.grade").grade
    oks = [f for f in glob.glob(os.path.join(os.path.dirname(d), "ok_*.csv"))]
    od = os.path.join(out, cid); os.makedirs(od, exist_ok=True)
    ans = os.path.join(os.path.dirname(d), "answers.csv")
    exp = {}
    for i in range(n):
        base = open(rng.choice(oks), encoding="utf-8").read()
        t = base
        for _ in range(rng.randrange(1, 5)): t = mutate(t)
        name = "f%03d" % i
        p = os.path.join(od, name + ".csv")
        open(p, "w", newline="").write(t)
        exp[name] = golden.grade_case(grade_fn, read_csv, ans, p)
    json.dump(exp, open(os.path.join(od, "expected.json"), "w"), indent=0)
    print(cid, sum(e["valid"] for e in exp.values()), "/", n, file=sys.stderr)
