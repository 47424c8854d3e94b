import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
feats = ["age", "income"]
X, y, X_test = train[feats].values, train["target"].values, test[feats].values

oof = np.zeros(len(train))
test_preds = np.zeros(len(test))
skf = StratifiedKFold(n_splits=3, shuffle=True, random_state=42)
for fold, (tr_idx, val_idx) in enumerate(skf.split(X, y)):
    model = HistGradientBoostingClassifier(max_iter=20, min_samples_leaf=3)
    model.fit(X[tr_idx], y[tr_idx])
    oof[val_idx] = model.predict_proba(X[val_idx])[:, 1]
    fold_auc = roc_auc_score(y[val_idx], oof[val_idx])
    print(f"fold {fold}: auc={fold_auc:.4f}")
    test_preds += model.predict_proba(X_test)[:, 1] / skf.n_splits

print("OOF AUC:", roc_auc_score(y, oof))
sub = pd.DataFrame({"id": test["id"], "target": test_preds})
sub.to_csv("submission.csv", index=False)
