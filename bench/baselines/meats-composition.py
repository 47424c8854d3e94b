"""Baseline for meats-composition (metric: mean of per-column RMSE, lower is better).

Approach: 172 NIR spectra, 100 wavelengths. The chemometrics standard is to
remove baseline shifts and scatter with derivatives: the features are the
Savitzky-Golay smoothed first and second derivatives of the spectrum (plus
the raw spectrum). Per target (water, fat, protein), candidates are PLS
regression with n components, ridge regression on the derivative features,
and an RBF kernel ridge; each target gets the model and hyper-parameters with
the lowest repeated 5-fold CV RMSE on train.
"""
import os

for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(v, "2")

import numpy as np
import pandas as pd
from scipy.signal import savgol_filter
from sklearn.cross_decomposition import PLSRegression
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.model_selection import RepeatedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

SEED = 42
ID = "sample_id"
TARGETS = ["water", "fat", "protein"]

train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
spec_cols = [c for c in train.columns if c.startswith("x_")]


def features(df):
    s = df[spec_cols].values
    d1 = savgol_filter(s, window_length=11, polyorder=2, deriv=1, axis=1)
    d2 = savgol_filter(s, window_length=11, polyorder=2, deriv=2, axis=1)
    return np.hstack([s, d1 * 10, d2 * 100])


X, Xt = features(train), features(test)

candidates = {}
for n in (8, 12, 16, 20):
    candidates[f"pls n={n}"] = make_pipeline(StandardScaler(), PLSRegression(n_components=n, scale=False))
for a in (1e-3, 1e-2, 1e-1):
    candidates[f"ridge alpha={a}"] = make_pipeline(StandardScaler(), Ridge(alpha=a))
for a in (1e-5, 1e-4, 1e-3, 1e-2):
    for g in (1e-5, 1e-4, 1e-3):
        candidates[f"kernel ridge alpha={a} gamma={g}"] = make_pipeline(
            StandardScaler(), KernelRidge(kernel="rbf", alpha=a, gamma=g))

cv = list(RepeatedKFold(n_splits=5, n_repeats=3, random_state=SEED).split(X))
sub = pd.DataFrame({ID: test[ID]})
total = 0.0
for t in TARGETS:
    y = train[t].values
    scores = {}
    for name, model in candidates.items():
        errs = []
        for tr, va in cv:
            p = np.ravel(model.fit(X[tr], y[tr]).predict(X[va]))
            errs.append(np.mean((p - y[va]) ** 2))
        scores[name] = float(np.sqrt(np.mean(errs)))
    best = min(scores, key=scores.get)
    top = sorted(scores.items(), key=lambda kv: kv[1])[:3]
    print(f"{t}: " + ", ".join(f"{k} {v:.3f}" for k, v in top) + f" -> chosen {best}")
    total += scores[best]
    sub[t] = np.ravel(candidates[best].fit(X, y).predict(Xt))
print(f"cv mean column rmse: {total / len(TARGETS):.4f}")
sub.to_csv("submission.csv", index=False)
print("wrote submission.csv", len(test))
