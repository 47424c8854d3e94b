"""Writes logloss_sklearn15.json: log_loss golden cases for grade's tests.

MLE-bench runs scikit-learn >= 1.5, whose log_loss clips predictions to
[eps, 1 - eps] with eps = numpy.finfo(float64).eps and no longer renormalises
rows. Debian's scikit-learn is older, so the formula is written out in numpy
(reference.py's log_loss_sklearn15). Run: /usr/bin/python3 logloss_sklearn15.py
"""

import io
import json

import pandas as pd

from reference import log_loss_sklearn15

CASES = [
    ("perfect", "id,a,b,c\n1,1,0,0\n2,0,1,0\n", "id,a,b,c\n1,1,0,0\n2,0,1,0\n"),
    ("zero on truth", "id,a,b,c\n1,1,0,0\n2,0,1,0\n", "id,a,b,c\n1,0,0.5,0.5\n2,0,1,0\n"),
    ("uniform", "id,a,b,c\n1,1,0,0\n2,0,0,1\n", "id,a,b,c\n1,0.3333333,0.3333333,0.3333334\n2,0.3333333,0.3333333,0.3333334\n"),
    # sums 1 + 9e-6: inside the tolerance; renormalising would change the score
    ("sum above one", "id,a,b\n1,1,0\n2,0,1\n", "id,a,b\n1,0.700009,0.3\n2,0.2,0.800009\n"),
    ("sum below one", "id,a,b\n1,1,0\n2,0,1\n", "id,a,b\n1,0.69999,0.3\n2,0.2,0.79999\n"),
    ("tiny probabilities", "id,a,b\n1,1,0\n2,0,1\n", "id,a,b\n1,1e-300,1\n2,1e-17,0.99999999999999999\n"),
]


def main():
    out = []
    for name, answers, submission in CASES:
        ans = pd.read_csv(io.StringIO(answers), float_precision="round_trip").sort_values("id")
        sub = pd.read_csv(io.StringIO(submission), float_precision="round_trip").sort_values("id")
        cols = [c for c in ans.columns if c != "id"]
        score = log_loss_sklearn15(ans[cols].to_numpy(), sub[cols].to_numpy())
        out.append({"name": name, "answers": answers, "submission": submission, "score": score})
    with open("logloss_sklearn15.json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
