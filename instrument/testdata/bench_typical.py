"""Tabular baseline: gradient boosting with K-fold CV and a linear blend."""
import os
import warnings

import numpy as np
import pandas as pd
import xgboost as xgb
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

warnings.filterwarnings("ignore")
DATA_DIR = "data"
SEED = 42
N_SPLITS = 5


def load(name):
    return pd.read_csv(os.path.join(DATA_DIR, name))


def preprocess(df, cats):
    df = df.copy()
    for c in cats:
        df[c] = df[c].astype("category").cat.codes
    df["income_per_age"] = df["income"] / (df["age"] + 1)
    return df


train = load("train.csv")
test = load("test.csv")
cat_cols = [c for c in train.columns if train[c].dtype == object and c != "text"]
train = preprocess(train, cat_cols)
test = preprocess(test, cat_cols)
features = [c for c in train.columns if c not in ("id", "target", "text")]
X, y = train[features].values, train["target"].values
X_test = test[features].values

oof_xgb = np.zeros(len(train))
oof_lr = np.zeros(len(train))
pred_xgb = np.zeros(len(test))
pred_lr = np.zeros(len(test))
skf = StratifiedKFold(n_splits=N_SPLITS, shuffle=True, random_state=SEED)

for fold, (tr_idx, va_idx) in enumerate(skf.split(X, y)):
    X_tr, X_va = X[tr_idx], X[va_idx]
    y_tr, y_va = y[tr_idx], y[va_idx]

    booster = xgb.XGBClassifier(
        n_estimators=300,
        max_depth=4,
        learning_rate=0.05,
        subsample=0.8,
        colsample_bytree=0.8,
        random_state=SEED,
    )
    booster.fit(X_tr, y_tr, eval_set=[(X_va, y_va)], verbose=False)
    oof_xgb[va_idx] = booster.predict_proba(X_va)[:, 1]
    pred_xgb += booster.predict_proba(X_test)[:, 1] / N_SPLITS

    lr = make_pipeline(StandardScaler(), LogisticRegression(C=0.5, max_iter=1000))
    lr.fit(X_tr, y_tr)
    oof_lr[va_idx] = lr.predict_proba(X_va)[:, 1]
    pred_lr += lr.predict_proba(X_test)[:, 1] / N_SPLITS

    print(f"fold {fold}: xgb auc {roc_auc_score(y_va, oof_xgb[va_idx]):.4f} "
          f"lr auc {roc_auc_score(y_va, oof_lr[va_idx]):.4f}")

best_w, best_auc = 0.0, -1.0
for w in np.linspace(0, 1, 11):
    auc = roc_auc_score(y, w * oof_xgb + (1 - w) * oof_lr)
    if auc > best_auc:
        best_w, best_auc = w, auc
print(f"blend weight {best_w:.1f}, OOF AUC {best_auc:.4f}")

final = best_w * pred_xgb + (1 - best_w) * pred_lr
sub = pd.DataFrame({"id": test["id"], "target": final})
sub.to_csv("submission.csv", index=False)
print(sub.head())
