"""Baseline for letter-recognition (metric: accuracy, higher is better).

Approach: 16 integer shape features, 26 classes, 16k rows: a classic RBF-kernel
SVM problem. Standardise, then an RBF SVC with C and gamma chosen by 3-fold
stratified CV accuracy on train from a small grid (k-nearest neighbours is
checked alongside as a sanity baseline).
"""
import os

for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(v, "2")

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

SEED = 42
ID, TARGET = "id", "lettr"

train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
feats = [c for c in train.columns if c not in (ID, TARGET)]
X, Xt, y = train[feats].values.astype(float), test[feats].values.astype(float), train[TARGET].values

candidates = {
    "knn k=1": make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=1)),
    "svc C=10 gamma=0.1": make_pipeline(StandardScaler(), SVC(C=10, gamma=0.1)),
    "svc C=30 gamma=0.2": make_pipeline(StandardScaler(), SVC(C=30, gamma=0.2)),
    "svc C=100 gamma=0.1": make_pipeline(StandardScaler(), SVC(C=100, gamma=0.1)),
}
cv = StratifiedKFold(3, shuffle=True, random_state=SEED)
scores = {k: cross_val_score(m, X, y, cv=cv, scoring="accuracy").mean() for k, m in candidates.items()}
for k, s in scores.items():
    print(f"cv accuracy {k}: {s:.4f}")
best = max(scores, key=scores.get)
print("chosen:", best)

pred = candidates[best].fit(X, y).predict(Xt)
pd.DataFrame({ID: test[ID], TARGET: pred}).to_csv("submission.csv", index=False)
print("wrote submission.csv", len(test))
