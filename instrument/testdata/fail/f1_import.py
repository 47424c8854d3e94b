import pandas as pd
import lightgbm_that_is_not_installed as lgbm

train = pd.read_csv("data/train.csv")
model = lgbm.LGBMClassifier()
model.fit(train[["age"]], train["target"])
