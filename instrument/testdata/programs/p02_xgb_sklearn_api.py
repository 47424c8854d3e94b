import numpy as np
import pandas as pd
import xgboost as xgb
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import cross_val_score, train_test_split

train_df = pd.read_csv("data/train.csv")
test_df = pd.read_csv("data/test.csv")

for col in ["city"]:
    cats = pd.Categorical(pd.concat([train_df[col], test_df[col]])).categories
    train_df[col] = pd.Categorical(train_df[col], categories=cats).codes
    test_df[col] = pd.Categorical(test_df[col], categories=cats).codes

FEATURES = ["age", "income", "city"]
X, y = train_df[FEATURES], train_df["target"]

clf = xgb.XGBClassifier(
    n_estimators=20,
    max_depth=3,
    learning_rate=0.3,
    n_jobs=1,
    eval_metric="logloss",
)
cv_scores = cross_val_score(clf, X, y, cv=3, scoring="roc_auc")
print("CV AUC: %.4f +- %.4f" % (np.mean(cv_scores), np.std(cv_scores)))

X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=0.3, random_state=1, stratify=y)
clf.fit(X_tr, y_tr, eval_set=[(X_va, y_va)], verbose=False)
auc = roc_auc_score(y_va, clf.predict_proba(X_va)[:, 1])
print("holdout AUC", auc)

test_pred = clf.predict_proba(test_df[FEATURES])[:, 1]
pd.DataFrame({"id": test_df["id"], "target": test_pred}).to_csv("submission.csv", index=False)
