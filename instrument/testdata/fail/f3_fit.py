import pandas as pd
from sklearn.linear_model import LogisticRegression

train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
model = LogisticRegression()
model.fit(train[["age", "city"]], train["target"])  # city is text: fails
test["target"] = model.predict(test[["age", "city"]])
test[["id", "target"]].to_csv("submission.csv", index=False)
