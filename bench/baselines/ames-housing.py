"""Baseline for ames-housing (metric: RMSLE, lower is better).

Approach: model log1p(Sale_Price) so that squared error on it is the metric.
Two classic Kaggle models: (1) a ridge regression on one-hot categoricals plus
standardised numerics, with skewed areas log-transformed and a few engineered
totals (total square feet, house age, total baths); (2) xgboost on ordinal
codes of the same frame. The huge-but-cheap partial sales the data set's author
warns about (above 4000 sq ft) are deliberately KEPT in training: the public
test features contain two more of them (5095 and 5642 sq ft, Partial), and
without the one training example the models price them at ~$600k. Ridge alpha and the
ridge/xgboost blend weight are chosen by 5-fold CV RMSE on train.
"""
import os

for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(v, "2")

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from xgboost import XGBRegressor

SEED = 42
ID, TARGET = "house_id", "Sale_Price"

train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
y = np.log1p(train[TARGET].values)


def features(df):
    df = df.drop(columns=[ID, TARGET], errors="ignore").copy()
    df["Total_SF"] = df["Total_Bsmt_SF"] + df["First_Flr_SF"] + df["Second_Flr_SF"]
    df["Age"] = df["Year_Sold"] - df["Year_Built"]
    df["Remod_Age"] = df["Year_Sold"] - df["Year_Remod_Add"]
    df["Total_Baths"] = df["Full_Bath"] + 0.5 * df["Half_Bath"] + df["Bsmt_Full_Bath"] + 0.5 * df["Bsmt_Half_Bath"]
    df["Porch_SF"] = df[[c for c in df.columns if "Porch" in c or c == "Wood_Deck_SF"]].sum(axis=1)
    df["MS_SubClass"] = df["MS_SubClass"].astype(str)
    return df


X, Xt = features(train), features(test)
cat_cols = [c for c in X.columns if X[c].dtype == object]
num_cols = [c for c in X.columns if c not in cat_cols]
# log-transform skewed non-negative numerics for the linear model
skewed = [c for c in num_cols if X[c].min() >= 0 and X[c].skew() > 0.75]


def linear_frame(df):
    out = df.copy()
    out[skewed] = np.log1p(out[skewed])
    return out


Xl, Xlt = linear_frame(X), linear_frame(Xt)


def ridge(alpha):
    return make_pipeline(ColumnTransformer([
        ("cat", OneHotEncoder(handle_unknown="ignore", min_frequency=3), cat_cols),
        ("num", StandardScaler(), num_cols),
    ]), Ridge(alpha=alpha))


def codes(df):
    out = df.copy()
    for c in cat_cols:
        out[c] = pd.Categorical(df[c], categories=sorted(X[c].unique())).codes
    return out


Xg, Xgt = codes(X), codes(Xt)
gbm = XGBRegressor(n_estimators=600, learning_rate=0.05, max_depth=4, subsample=0.7, colsample_bytree=0.5,
                   min_child_weight=2, reg_lambda=1.0, n_jobs=2, random_state=SEED, tree_method="hist")

alphas = (3.0, 10.0, 30.0)
cv = KFold(5, shuffle=True, random_state=SEED)
oof = {a: np.zeros(len(y)) for a in alphas}
oof["xgboost"] = np.zeros(len(y))
for tr, va in cv.split(X):
    for a in alphas:
        oof[a][va] = ridge(a).fit(Xl.iloc[tr], y[tr]).predict(Xl.iloc[va])
    oof["xgboost"][va] = gbm.fit(Xg.iloc[tr], y[tr]).predict(Xg.iloc[va])

rmse = lambda p: float(np.sqrt(np.mean((p - y) ** 2)))
for k, p in oof.items():
    print(f"cv rmse(log) {'ridge alpha=' + str(k) if k != 'xgboost' else k}: {rmse(p):.4f}")
best_a = min(alphas, key=lambda a: rmse(oof[a]))
blend = {w: rmse((1 - w) * oof[best_a] + w * oof["xgboost"]) for w in np.linspace(0, 1, 11)}
w = min(blend, key=blend.get)
print(f"chosen: ridge alpha={best_a} with xgboost weight {w:.1f}: cv rmse(log) {blend[w]:.4f}")

pred = np.zeros(len(test))
if w < 1:
    pred += (1 - w) * np.clip(ridge(best_a).fit(Xl, y).predict(Xlt), y.min(), y.max())
if w > 0:
    pred += w * gbm.fit(Xg, y).predict(Xgt)

# A linear model extrapolates on the two giant test houses; never predict outside the prices seen in train.
pred = np.clip(pred, y.min(), y.max())
pd.DataFrame({ID: test[ID], TARGET: np.expm1(pred)}).to_csv("submission.csv", index=False)
print("wrote submission.csv", len(test))
