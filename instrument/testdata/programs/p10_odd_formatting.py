#!/usr/bin/env python3
# -*- coding: utf-8 -*-
import functools, sys
try:
    import pandas as pd
except ImportError:
    sys.exit("pandas missing")
from sklearn.tree import DecisionTreeClassifier
from sklearn import metrics


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        return fn(*a, **k)
    return wrapper


class Wrapper:
    def __init__(self, depth):
        self.depth = depth; self.model = None

    @logged
    def fit(self, X, y):
        self.model = DecisionTreeClassifier(max_depth=self.depth,
                                            random_state=0)
        self.model.fit(X, y)
        return self

    def predict(self, X):
        return self.model.predict(X)


if len(sys.argv) > 5: train = None
else: train = pd.read_csv("data/train.csv")
test = pd.read_csv(
    "data/test.csv",
)
cols = ["age",
        "income"]
w = Wrapper(3).fit(train[cols], train["target"])
if True:
    val = train.tail(10)
    acc = metrics.accuracy_score(val["target"], w.predict(val[cols])); print("val acc", acc)
elif False:
    pass
else:
    pass
test["target"] = w.predict(test[cols])
test[["id", "target"]].to_csv("submission.csv", index=False)
