"""Scores a submission against a task's private answers with scikit-learn.

Used by the recipe tests and measurements while the Go grade package is being
written; it follows CONTRACT.md's metric table for the metrics the suite uses.
Usage: score.py TASK_DIR SUBMISSION.csv  -> one JSON line {"valid", "score", "error"}.
"""
import json
import re
import sys

import numpy as np
import pandas as pd
from sklearn import metrics


def task_meta(task_dir):
    meta = {}
    for line in open(f"{task_dir}/task.yaml"):
        m = re.match(r"^(\w+):\s*(.*)$", line.strip())
        if m:
            meta[m.group(1)] = m.group(2).strip().strip('"')
    meta["target_columns"] = [c.strip().strip('"') for c in meta["target_columns"].strip("[]").split(",")]
    return meta


def score(task_dir, sub_path):
    meta = task_meta(task_dir)
    id_col, targets, metric = meta["id_column"], meta["target_columns"], meta["metric"]
    answers = pd.read_csv(f"{task_dir}/private/answers.csv", dtype={id_col: str})
    sub = pd.read_csv(sub_path, dtype={id_col: str})
    if list(sub.columns) != [id_col] + targets:
        raise ValueError(f"columns {list(sub.columns)} != {[id_col] + targets}")
    if len(sub) != len(answers) or sub[id_col].duplicated().any() or set(sub[id_col]) != set(answers[id_col]):
        raise ValueError("ids differ from the answers")
    sub = sub.set_index(id_col).loc[answers[id_col]]
    truth = answers.set_index(id_col)
    if metric == "auc":
        return metrics.roc_auc_score(truth[targets[0]], sub[targets[0]].astype(float))
    if metric == "accuracy":
        return float((truth[targets[0]].astype(str).values == sub[targets[0]].astype(str).values).mean())
    if metric == "qwk":
        return metrics.cohen_kappa_score(truth[targets[0]].astype(int), sub[targets[0]].astype(int), weights="quadratic")
    if metric == "log_loss":
        p = sub[targets].to_numpy(float)
        if not np.allclose(p.sum(axis=1), 1, atol=1e-6):
            raise ValueError("probabilities do not sum to 1")
        return metrics.log_loss(truth[targets].to_numpy(float).argmax(axis=1), np.clip(p, 1e-15, 1 - 1e-15), labels=range(len(targets)))
    if metric in ("rmse", "mean_column_rmse"):
        return float(np.mean([np.sqrt(metrics.mean_squared_error(truth[c], sub[c].astype(float))) for c in targets]))
    if metric in ("rmsle", "mean_column_rmsle"):
        return float(np.mean([np.sqrt(metrics.mean_squared_log_error(truth[c], sub[c].astype(float))) for c in targets]))
    if metric == "mae":
        return metrics.mean_absolute_error(truth[targets[0]], sub[targets[0]].astype(float))
    raise ValueError(f"metric {metric} not scored here")


try:
    s = score(sys.argv[1], sys.argv[2])
    if not np.isfinite(s):
        raise ValueError("score is not finite")
    print(json.dumps({"valid": True, "score": float(s), "error": ""}))
except Exception as e:  # any problem makes the submission invalid, with a reason
    print(json.dumps({"valid": False, "score": None, "error": f"{type(e).__name__}: {e}"}))
