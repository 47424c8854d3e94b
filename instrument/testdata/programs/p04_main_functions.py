"""Random forest baseline, organised in functions."""
import os

import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score

DATA = "data"


def load_data(data_dir=DATA):
    return (pd.read_csv(os.path.join(data_dir, "train.csv")),
            pd.read_csv(os.path.join(data_dir, "test.csv")))


def build_model(seed=0):
    return RandomForestClassifier(n_estimators=30, max_depth=4, random_state=seed)


def main():
    train, test = load_data()
    feats = ["age", "income"]
    holdout = train.sample(frac=0.25, random_state=0)
    fit_part = train.drop(holdout.index)
    model = build_model()
    model.fit(fit_part[feats], fit_part["target"])
    score = roc_auc_score(holdout["target"], model.predict_proba(holdout[feats])[:, 1])
    print("holdout auc", round(score, 4))
    preds = model.predict_proba(test[feats])[:, 1]
    pd.DataFrame({"id": test.id, "target": preds}).to_csv("submission.csv", index=False)


if __name__ == "__main__":
    main()
