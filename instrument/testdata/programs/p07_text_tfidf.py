import csv

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import cross_validate

with open("data/train.csv", newline="") as f:
    rows = list(csv.DictReader(f))
with open("data/test.csv", newline="") as f:
    test_rows = list(csv.DictReader(f))

texts = [r["text"] for r in rows]
labels = [int(r["target"]) for r in rows]
vec = TfidfVectorizer(ngram_range=(1, 2), min_df=1)
X = vec.fit_transform(texts)
X_test = vec.transform([r["text"] for r in test_rows])

sgd = SGDClassifier(loss="log_loss", alpha=1e-4, random_state=0)
res = cross_validate(sgd, X, labels, cv=3, scoring="accuracy", return_train_score=True)
print("train acc", res["train_score"].mean(), "cv acc", res["test_score"].mean())
sgd.fit(X, labels)
probs = sgd.predict_proba(X_test)[:, 1]
with open("submission.csv", "w", newline="") as out:
    w = csv.writer(out)
    w.writerow(["id", "target"])
    for r, p in zip(test_rows, probs):
        w.writerow([r["id"], p])
