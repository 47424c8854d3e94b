import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split

train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
features = ["age", "income"]
X = train[features]
y = train["target"]
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.25, random_state=0)

model = LogisticRegression(max_iter=500)
model.fit(X_train, y_train)
val_acc = accuracy_score(y_val, model.predict(X_val))
print(f"validation accuracy: {val_acc:.3f}")

test["target"] = model.predict(test[features])
test[["id", "target"]].to_csv("submission.csv", index=False)
