"""Reference grader for grade's parity and speed tests.

Grades submissions the way MLE-bench's graders do (pandas read_csv with
float_precision="round_trip", sort both frames by id, check the ids agree,
then the scikit-learn / scipy metric), using the scikit-learn installed here,
except log_loss: MLE-bench runs scikit-learn >= 1.5, whose log_loss differs
from Debian's 1.2.1 (see log_loss_sklearn15), so that one is numpy here.

  reference.py cases.json      grade every case, print a JSON list of results
  reference.py --bench metric id_column target[,target...] answers.csv submission.csv repeats
                               time read_csv + merge on id + metric; print the best wall
                               and CPU seconds as JSON {"seconds", "cpu_seconds", "score"}

Each case is {"metric", "id_column", "target_columns", "answers", "submission"};
each result is {"valid": bool, "score": float|null, "error": str}.
"""

import json
import sys
import time

import numpy as np
import pandas as pd
from scipy.stats import pearsonr
from scipy.special import xlogy
from sklearn.metrics import (accuracy_score, cohen_kappa_score,
                             mean_absolute_error, mean_squared_error,
                             roc_auc_score)


def log_loss_sklearn15(y_true, y_pred):
    """scikit-learn >= 1.5's log_loss for one-hot y_true and 2-D y_pred:
    clip to [eps, 1 - eps] with eps = float64 machine epsilon, no
    renormalisation of rows (1.5 only warns when they do not sum to 1), then
    the mean over rows of -sum(y * log p)."""
    p = np.asarray(y_pred, dtype=np.float64)
    if not np.isfinite(p).all():
        raise ValueError("Input contains NaN or infinity")
    eps = np.finfo(np.float64).eps
    p = np.clip(p, eps, 1 - eps)
    return float(np.average(-xlogy(np.asarray(y_true), p).sum(axis=1)))


class Invalid(Exception):
    pass


def read_csv(path):
    return pd.read_csv(path, float_precision="round_trip")


def aligned(sub, ans, id_col, targets):
    if set(sub.columns) != {id_col, *targets}:
        raise Invalid(f"columns {list(sub.columns)}")
    if len(sub) != len(ans):
        raise Invalid("row count")
    sub = sub.sort_values(id_col).reset_index(drop=True)
    ans = ans.sort_values(id_col).reset_index(drop=True)
    if (sub[id_col].values != ans[id_col].values).any():
        raise Invalid("ids differ")
    return sub, ans


def jaccard(str1, str2):
    a = set(str1.lower().split())
    b = set(str2.lower().split())
    c = a.intersection(b)
    return float(len(c)) / (len(a) + len(b) - len(c))


def metric(name, sub, ans, targets):
    t = targets[0]
    if name == "auc":
        pd.to_numeric(sub[t])
        if sub[t].min() < 0 or sub[t].max() > 1:
            raise Invalid("auc range")
        return roc_auc_score(ans[t].to_numpy(), sub[t].to_numpy())
    if name == "mean_column_auc":
        return float(np.mean([roc_auc_score(ans[c], sub[c]) for c in targets]))
    if name == "accuracy":
        return accuracy_score(ans[t].to_numpy(), sub[t].to_numpy())
    if name == "log_loss":
        p = sub[targets]
        if not np.all(np.isclose(p.sum(axis=1), 1, atol=1e-6)):
            raise Invalid("row sums")
        if not ((p >= 0) & (p <= 1)).all().all():
            raise Invalid("range")
        return log_loss_sklearn15(ans[targets].to_numpy(), p.to_numpy())
    if name == "rmse":
        return mean_squared_error(ans[t], sub[t], squared=False)
    if name == "mae":
        return mean_absolute_error(ans[t], sub[t])
    if name == "mean_column_rmse":
        return float(np.mean([mean_squared_error(ans[c], sub[c], squared=False) for c in targets]))
    if name in ("rmsle", "mean_column_rmsle"):
        # sklearn 1.2.1's mean_squared_log_error rejects values in (-1, 0);
        # newer root_mean_squared_log_error is this, with values > -1 allowed.
        return float(np.mean([
            mean_squared_error(np.log1p(ans[c]), np.log1p(sub[c]), squared=False)
            for c in targets]))
    if name == "qwk":
        return cohen_kappa_score(sub[t].values, ans[t].values, weights="quadratic")
    if name == "pearson":
        return pearsonr(ans[t].to_numpy(), sub[t].to_numpy())[0]
    if name == "jaccard":
        preds = sub[t].fillna("").astype(str).tolist()
        truth = ans[t].fillna("").astype(str).tolist()
        return float(np.mean([jaccard(a, b) for a, b in zip(preds, truth)]))
    raise ValueError(f"unknown metric {name}")


def grade(case):
    try:
        sub = read_csv(case["submission"])
        ans = read_csv(case["answers"])
        sub, ans = aligned(sub, ans, case["id_column"], case["target_columns"])
        score = float(metric(case["metric"], sub, ans, case["target_columns"]))
        if not np.isfinite(score):
            return {"valid": False, "score": None, "error": f"score {score}"}
        return {"valid": True, "score": score, "error": ""}
    except Exception as e:  # noqa: BLE001 - any failure means "not graded", as in MLE-bench
        return {"valid": False, "score": None, "error": f"{type(e).__name__}: {e}"}


def bench(name, id_col, targets, answers, submission, repeats):
    """Time what a pandas user would write: read both files, merge on id, metric."""
    best = best_cpu = float("inf")
    score = None
    for _ in range(repeats):
        start = time.perf_counter()
        start_cpu = time.process_time()
        sub = pd.read_csv(submission, float_precision="round_trip")
        ans = pd.read_csv(answers, float_precision="round_trip")
        if set(sub.columns) != {id_col, *targets} or len(sub) != len(ans):
            raise Invalid("shape")
        merged = ans.merge(sub, on=id_col, suffixes=("_true", "_pred"), validate="one_to_one")
        if len(merged) != len(ans):
            raise Invalid("ids")
        y_true = merged[[c + "_true" for c in targets]].to_numpy()
        y_pred = merged[[c + "_pred" for c in targets]].to_numpy()
        if name == "auc":
            if y_pred.min() < 0 or y_pred.max() > 1:
                raise Invalid("range")
            score = roc_auc_score(y_true[:, 0], y_pred[:, 0])
        elif name == "log_loss":
            if not np.all(np.isclose(y_pred.sum(axis=1), 1, atol=1e-6)):
                raise Invalid("row sums")
            if not ((y_pred >= 0) & (y_pred <= 1)).all():
                raise Invalid("range")
            score = log_loss_sklearn15(y_true, y_pred)
        else:
            raise ValueError(f"bench supports auc and log_loss, not {name}")
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    print(json.dumps({"seconds": best, "cpu_seconds": best_cpu, "score": float(score)}))


def main():
    if sys.argv[1] == "--bench":
        name, id_col, targets, answers, submission, repeats = sys.argv[2:8]
        bench(name, id_col, targets.split(","), answers, submission, int(repeats))
        return
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    json.dump([grade(c) for c in cases], sys.stdout)


if __name__ == "__main__":
    main()
