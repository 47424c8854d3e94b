import pandas as pd
import xgboost as xgb
from sklearn.metrics import log_loss

train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
cols = ["age", "income"]
n_val = len(train) // 4
tr, va = train.iloc[n_val:], train.iloc[:n_val]

dtrain = xgb.DMatrix(tr[cols], label=tr["target"])
dvalid = xgb.DMatrix(va[cols], label=va["target"])
dtest = xgb.DMatrix(test[cols])
params = {"objective": "binary:logistic", "eta": 0.3, "max_depth": 2, "nthread": 1}
booster = xgb.train(params, dtrain, num_boost_round=15,
                    evals=[(dtrain, "train"), (dvalid, "valid")], verbose_eval=5)

va_pred = booster.predict(dvalid)
print("valid logloss", log_loss(va["target"], va_pred, labels=[0, 1]))
test["target"] = booster.predict(dtest)
test[["id", "target"]].to_csv("submission.csv", index=False)
