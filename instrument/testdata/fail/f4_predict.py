import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score

train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
model = LogisticRegression()
model.fit(train[["age", "income"]], train["target"])
val = train.tail(10)
acc = accuracy_score(val["target"], model.predict(val[["age", "income"]]))
test["target"] = model.predict(test[["age"]])  # one column missing: fails
test[["id", "target"]].to_csv("submission.csv", index=False)
