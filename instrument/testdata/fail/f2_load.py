import pandas as pd
from sklearn.linear_model import LogisticRegression

train = pd.read_csv("data/train_v2.csv")
model = LogisticRegression()
model.fit(train[["age"]], train["target"])
