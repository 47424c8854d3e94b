"""Baseline for stackoverflow-remote (metric: ROC AUC, higher is better).

Approach: survey answers are mostly 0/1 role flags plus a few numbers. Log
salary and company size (both heavy-tailed), one-hot the country, add the
number of roles. Candidates, picked by repeated 5-fold stratified CV AUC on
train: L2 logistic regression (C from a small grid) and a shallow xgboost;
blending the two is also tried. Only about 10% are remote, so AUC is noisy:
repeated CV keeps the choice from chasing noise.
"""
import os

for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(v, "2")

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import RepeatedStratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from xgboost import XGBClassifier

SEED = 42
ID, TARGET = "respondent_id", "Remote"

train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
y = train[TARGET].values
roles = ["Data_scientist", "Database_administrator", "Desktop_applications_developer",
         "Developer_with_stats_math_background", "DevOps", "Embedded_developer", "Graphic_designer",
         "Graphics_programming", "Machine_learning_specialist", "Mobile_developer",
         "Quality_assurance_engineer", "Systems_administrator", "Web_developer"]
countries = sorted(train["Country"].unique())


def features(df):
    out = df.drop(columns=[ID, TARGET, "Country"], errors="ignore").astype(float)
    out = out.fillna(out.median())
    out["log_salary"] = np.log1p(out["Salary"])
    out["log_company"] = np.log1p(out["CompanySizeNumber"])
    out["log_years"] = np.log1p(out["YearsCodedJob"])
    out["n_roles"] = df[roles].sum(axis=1)
    for c in countries:
        out["country_" + c] = (df["Country"] == c).astype(float)
    return out


X, Xt = features(train), features(test)

candidates = {f"logreg C={c}": make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000))
              for c in (0.01, 0.1, 1.0)}
candidates["xgboost"] = XGBClassifier(n_estimators=300, learning_rate=0.03, max_depth=2, subsample=0.8,
                                      colsample_bytree=0.8, min_child_weight=5, reg_lambda=5.0,
                                      n_jobs=2, random_state=SEED, tree_method="hist")

cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=3, random_state=SEED)
oof = {k: np.zeros(len(y)) for k in candidates}
for tr, va in cv.split(X, y):
    for k, m in candidates.items():
        oof[k][va] += m.fit(X.iloc[tr], y[tr]).predict_proba(X.iloc[va])[:, 1] / 3

scores = {k: roc_auc_score(y, v) for k, v in oof.items()}
best_lr = max((k for k in scores if k.startswith("logreg")), key=scores.get)
# AUC only needs a ranking: blend on ranks so the two scales mix fairly.
rank = lambda a: pd.Series(a).rank(pct=True).values
scores["blend"] = roc_auc_score(y, rank(oof[best_lr]) + rank(oof["xgboost"]))
for k, v in scores.items():
    print(f"cv auc {k}: {v:.4f}")
best = max(scores, key=scores.get)
print("chosen:", best, "(with", best_lr + ")" if best == "blend" else "")

if best == "blend":
    p = (rank(candidates[best_lr].fit(X, y).predict_proba(Xt)[:, 1])
         + rank(candidates["xgboost"].fit(X, y).predict_proba(Xt)[:, 1])) / 2
else:
    p = candidates[best].fit(X, y).predict_proba(Xt)[:, 1]

pd.DataFrame({ID: test[ID], TARGET: np.clip(p, 0, 1)}).to_csv("submission.csv", index=False)
print("wrote submission.csv", len(test))
