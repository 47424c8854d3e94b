"""Builds the small fixture tasks in this folder (MLE-bench layout, CONTRACT.md section 1).

They are deliberately tiny so the Go tests run the rendered programs in seconds,
yet each has the trait of a suite task the grammar must handle: free text with a
non-ASCII character, missing numeric and categorical values, PNG images keyed by
id, several regression targets, and class-probability submissions.
Run with /usr/bin/python3 from this folder; the output is deterministic.
"""
import os

import numpy as np
import pandas as pd
from PIL import Image
from sklearn.datasets import load_digits

rng = np.random.RandomState(7)


def write_task(name, metric, id_col, targets, train, test, answers, sample):
    os.makedirs(f"{name}/public", exist_ok=True)
    os.makedirs(f"{name}/private", exist_ok=True)
    with open(f"{name}/task.yaml", "w") as f:
        f.write(f"name: {name}\nmetric: {metric}\nid_column: {id_col}\n")
        f.write("target_columns: [" + ", ".join(targets) + "]\n")
        f.write('source: "synthetic fixture, policy/recipe/testdata/make_tasks.py"\n')
    with open(f"{name}/description.md", "w") as f:
        f.write(f"# {name}\n\nA small fixture task scored by {metric}.\n")
    train.to_csv(f"{name}/public/train.csv", index=False)
    test.to_csv(f"{name}/public/test.csv", index=False)
    sample.to_csv(f"{name}/public/sample_submission.csv", index=False)
    answers.to_csv(f"{name}/private/answers.csv", index=False)


def split(df, n_test):
    idx = rng.permutation(len(df))
    return df.iloc[idx[n_test:]].reset_index(drop=True), df.iloc[idx[:n_test]].reset_index(drop=True)


# Text reviews, binary target, AUC.
good = "great tasty delicious fresh lovely perfect excellent favourite".split()
bad = "stale bland awful broken soggy bitter disappointing expensive".split()
filler = "the coffee tea snack box arrived and it was quite really very a bit for my family".split()
rows = []
for i in range(420):
    great = rng.rand() < 0.5
    words = list(rng.choice(filler, 8))
    words += list(rng.choice(good if great else bad, 2)) + list(rng.choice(good + bad, 1))
    rng.shuffle(words)
    text = " ".join(words)
    if i % 37 == 0:
        text += " café"  # non-ASCII on purpose: an ascii loader must fail on this file
    rows.append((f"r{i:04d}", text, int(rng.poisson(3)), "yes" if great else "no"))
df = pd.DataFrame(rows, columns=["review_id", "review", "helpful_votes", "great"])
tr, te = split(df, 120)
write_task("tiny-reviews", "auc", "review_id", ["great"], tr, te.drop(columns=["great"]),
           te[["review_id", "great"]].assign(great=(te.great == "yes").astype(int)),
           te[["review_id"]].assign(great=0.5))

# Tabular with missing values, binary target, AUC.
n = 500
tenure = rng.randint(0, 72, n).astype(float)
charges = rng.uniform(20, 120, n)
contract = rng.choice(["month", "one_year", "two_year"], n)
logit = -0.04 * tenure + 0.02 * charges + np.where(contract == "month", 1.0, -1.0)
churn = np.where(rng.rand(n) < 1 / (1 + np.exp(-logit)), "Yes", "No")
tenure[rng.rand(n) < 0.15] = np.nan
charges[rng.rand(n) < 0.1] = np.nan
contract = contract.astype(object)
contract[rng.rand(n) < 0.1] = np.nan
df = pd.DataFrame({"customer": [f"c{i}" for i in range(n)], "tenure": tenure,
                   "monthly_charges": charges.round(2), "contract": contract, "churn": churn})
tr, te = split(df, 150)
write_task("tiny-churn", "auc", "customer", ["churn"], tr, te.drop(columns=["churn"]),
           te[["customer"]].assign(churn=(te.churn == "Yes").astype(int)),
           te[["customer"]].assign(churn=0.5))

# 8x8 digit images keyed by id, accuracy.
digits = load_digits()
idx = rng.permutation(len(digits.images))[:400]
os.makedirs("tiny-digits/public/images", exist_ok=True)
ids = [f"img{i:04d}" for i in range(len(idx))]
for name, k in zip(ids, idx):
    pixels = (digits.images[k] * 255 / 16).astype(np.uint8)
    Image.fromarray(pixels, mode="L").save(f"tiny-digits/public/images/{name}.png")
df = pd.DataFrame({"id": ids, "label": digits.target[idx]})
tr, te = split(df, 100)
write_task("tiny-digits", "accuracy", "id", ["label"], tr, te.drop(columns=["label"]), te,
           te[["id"]].assign(label=0))

# Spectra with three regression targets, mean_column_rmse.
n = 150
base = rng.normal(size=(n, 3))
wave = np.linspace(0, 1, 30)
spectra = base @ np.vstack([np.sin(3 * wave), np.cos(2 * wave), wave]) + 0.05 * rng.normal(size=(n, 30))
df = pd.DataFrame(spectra.round(4), columns=[f"x_{i:03d}" for i in range(30)])
df.insert(0, "sample_id", np.arange(1, n + 1))
df["water"] = (60 + 5 * base[:, 0]).round(2)
df["fat"] = (18 + 6 * base[:, 1]).round(2)
df["protein"] = (17 + 2 * base[:, 2]).round(2)
tr, te = split(df, 40)
targets = ["water", "fat", "protein"]
write_task("tiny-meats", "mean_column_rmse", "sample_id", targets, tr, te.drop(columns=targets),
           te[["sample_id"] + targets], te[["sample_id"]].assign(water=0.0, fat=0.0, protein=0.0))

# Categorical leaves with missing values, 4 classes, log_loss.
n = 360
classes = ["brown-spot", "downy-mildew", "frog-eye", "phytophthora-rot"]
y = rng.randint(0, 4, n)
cols = {}
for j in range(6):
    levels = np.array(["0", "1", "2"])
    v = levels[(y + rng.randint(0, 2, n) * (j % 2) + j) % 3].astype(object)
    v[rng.rand(n) < 0.12] = np.nan
    cols[f"leaf_{j}"] = v
df = pd.DataFrame(cols)
df["precip"] = np.where(rng.rand(n) < 0.1, None, np.array(["lt-norm", "norm", "gt-norm"])[y % 3])
df.insert(0, "plant", np.arange(n))
df["Class"] = np.array(classes)[y]
tr, te = split(df, 90)
ans = te[["plant"]].copy()
for c in classes:
    ans[c] = (te.Class == c).astype(float)
sample = te[["plant"]].copy()
for c in classes:
    sample[c] = 0.25
write_task("tiny-soy", "log_loss", "plant", classes, tr, te.drop(columns=["Class"]), ans, sample)

# The kinds of columns users' tables have beyond the suite's (issue 10): an
# identifier per row (named, and an unnamed code), dates and date-times, a
# high-cardinality categorical, ids shared by rows (a user), a TRUE/FALSE
# column, short free-text titles, longer notes with missing values. Regression, rmse.
n = 520
venues = [f"venue {i}" for i in range(80)]
venue_effect = rng.normal(0, 3, len(venues))
users = rng.randint(1000, 1070, n)
venue = rng.randint(0, len(venues), n)
day = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.randint(0, 700, n), unit="D")
hour = rng.randint(8, 23, n)
outdoor = rng.rand(n) < 0.4
adjectives = "big small late early open quiet loud grand local summer winter".split()
nouns = "concert fair market talk match show party reading festival meeting".split()
places = "hall park square garden library club stadium".split()
titles = [f"{rng.choice(adjectives)} {rng.choice(nouns)} at the {rng.choice(places)}" for _ in range(n)]
notes = np.array([" ".join(rng.choice(filler, 12)) for _ in range(n)], dtype=object)
notes[rng.rand(n) < 0.2] = np.nan
size = rng.uniform(10, 100, n).round(1)
attendance = (size + venue_effect[venue] * 5 + 4 * np.sin(2 * np.pi * day.month.to_numpy() / 12) + 0.5 * (hour - 15)
              + np.where(outdoor, 6, 0) + np.array([8 if "festival" in t else 0 for t in titles]) + rng.normal(0, 2, n))
venue_names = np.array(venues, dtype=object)[venue]
venue_names[rng.rand(n) < 0.05] = np.nan
df = pd.DataFrame({"event_id": np.arange(n), "record_id": rng.permutation(n) + 500000,
                   "ticket_code": [f"T{v:06x}" for v in rng.permutation(16**5)[:n]],
                   "day": day.strftime("%Y-%m-%d"), "logged_at": (day + pd.to_timedelta(hour, unit="h")).strftime("%Y-%m-%d %H:%M:%S"),
                   "venue": venue_names, "user_id": users, "outdoor": np.where(outdoor, "TRUE", "FALSE"),
                   "title": titles, "notes": notes, "size": size, "attendance": attendance.round(2)})
tr, te = split(df, 130)
write_task("tiny-events", "rmse", "event_id", ["attendance"], tr, te.drop(columns=["attendance"]),
           te[["event_id", "attendance"]], te[["event_id"]].assign(attendance=0.0))

# Several free-text columns (one with missing values) beside a
# high-cardinality categorical, a categorical and a date; 3 classes, log_loss.
n = 450
labels = np.array(["bird", "fish", "tree"])
y = rng.randint(0, 3, n)
lexicon = {0: "wing feather nest song beak flight".split(), 1: "fin scale river gill swim reef".split(),
           2: "leaf bark root branch seed forest".split()}
common = "the a small large old young green brown near far with of".split()


def phrase(k, words, noise):
    out = list(rng.choice(common, noise)) + list(rng.choice(lexicon[k], words))
    rng.shuffle(out)
    return " ".join(out)


names = [phrase(k, 1, 2) for k in y]
definitions = [phrase(k, 2, 8) for k in y]
examples = np.array([phrase(k, 1, 6) for k in y], dtype=object)
examples[rng.rand(n) < 0.3] = np.nan
authors = np.array([f"author_{(3 * rng.randint(0, 24) + k) % 72}" for k in y])
df = pd.DataFrame({"note_id": [f"n{i:04d}" for i in range(n)], "name": names, "definition": definitions,
                   "examples": examples, "author": authors, "kind": rng.choice(["plain", "verse"], n),
                   "written": (pd.Timestamp("2019-01-01") + pd.to_timedelta(rng.randint(0, 900, n), unit="D")).strftime("%Y-%m-%d"),
                   "label": labels[y]})
tr, te = split(df, 110)
ans = te[["note_id"]].copy()
for c in labels:
    ans[c] = (te.label == c).astype(float)
write_task("tiny-notes", "log_loss", "note_id", list(labels), tr, te.drop(columns=["label"]), ans,
           te[["note_id"]].assign(**{c: 1 / 3 for c in labels}))
