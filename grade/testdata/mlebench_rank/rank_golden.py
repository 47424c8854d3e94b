"""Writes leaderboard_<n>_<dir>.csv and expected.json: medal ranks
from MLE-bench's own Grader.rank_score for grade's Rank tests.

    /usr/bin/python3 rank_golden.py MLEBENCH_SRC

Leaderboards are made up here (seeded), with Kaggle's team-count bands in
mind (<100, 100-249, 250-999, >=1000) and both score directions. Each query
score goes through round(score, 5) first, as MLE-bench's Grader does before
ranking; None is a missing or invalid submission.
"""

import json
import os
import sys
import types

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    sys.path.insert(0, os.path.abspath(sys.argv[1]))
    for name in ("tqdm", "tqdm.auto", "py7zr"):
        mod = types.ModuleType(name)
        mod.tqdm = lambda x=None, *a, **k: x
        sys.modules.setdefault(name, mod)
    from mlebench.grade_helpers import Grader

    grader = Grader.__new__(Grader)  # rank_score does not use the grade function
    out_dir = HERE
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f.endswith(".csv") or f == "expected.json":
            os.remove(os.path.join(out_dir, f))
    rng = np.random.default_rng(7)
    expected = {}
    for n in (1, 7, 37, 99, 100, 180, 250, 600, 1000, 2400):
        for lower in (False, True):
            raw = np.round(np.sort(rng.random(n) * 0.4 + 0.5), 6)
            scores = raw if lower else raw[::-1]
            if n > 3:
                scores = scores.copy()
                scores[n // 3] = scores[n // 3 + 1]  # a tie
            name = "leaderboard_%d_%s" % (n, "lower" if lower else "higher")
            lb = pd.DataFrame({"teamName": ["team %d" % i for i in range(n)], "score": scores})
            path = os.path.join(out_dir, name + ".csv")
            lb.to_csv(path, index=False)
            lb = pd.read_csv(path)
            th = grader.rank_score(None, lb)
            queries = [None, th["gold_threshold"], th["silver_threshold"], th["bronze_threshold"],
                       th["median_threshold"], th["gold_threshold"] + 4e-6, th["gold_threshold"] - 4e-6,
                       th["bronze_threshold"] + 6e-6, th["bronze_threshold"] - 6e-6, 0.0, 2.0,
                       float(scores[-1]), float(scores[0])]
            rows = []
            for q in queries:
                s = None if q is None else round(q, 5)
                r = grader.rank_score(s, lb)
                medal = None
                for m in ("gold", "silver", "bronze"):
                    if r[m + "_medal"]:
                        medal = m
                rows.append({"score": q, "medal": medal, "above_median": bool(r["above_median"]),
                             "gold_threshold": r["gold_threshold"], "silver_threshold": r["silver_threshold"],
                             "bronze_threshold": r["bronze_threshold"], "median_threshold": r["median_threshold"],
                             "lower_is_better": grader.is_lower_better(lb)})
            expected[name] = rows
    with open(os.path.join(out_dir, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
