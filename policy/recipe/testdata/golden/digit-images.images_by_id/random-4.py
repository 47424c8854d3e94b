# plan: read.loader=ascii;read.rows=fifth;features.columns=typed;features.missing=most_frequent;features.image=gray_raw;features.scaling=none;model.family=naive_bayes;nb.variant=gaussian;validation=cv5;ensemble=average;ensemble.second=linear
"""Solution for task digit-images (metric: accuracy, higher is better).

Read the CSV files as ASCII text and train on a random fifth of the training rows. Use
the numeric columns (imputing missing values with the most frequent value) and read
images as raw grayscale pixel values. Train a naive Bayes model (gaussian). Average its
predictions with those of a linear model. Print a 5-fold cross-validated score, then
refit on all rows and write submission.csv.

Plan key: read.loader=ascii; read.rows=fifth; features.columns=typed;
features.missing=most_frequent; features.image=gray_raw; features.scaling=none;
model.family=naive_bayes; nb.variant=gaussian; validation=cv5; ensemble=average;
ensemble.second=linear
"""
import os
import time

# The threads this program may use (the runner sets OMP_NUM_THREADS to its share
# of the cores); more threads than cores make OpenMP threads wait on each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")
N_JOBS = int(os.environ["OMP_NUM_THREADS"])

import numpy as np
import pandas as pd
from PIL import Image
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, LabelEncoder

ID_COLUMN = "image_id"
TARGET = "digit"
started = time.time()

def load_images(paths):
    """Reads image files into one row of pixels each (grayscale, raw 0-255 values)."""
    rows = [np.asarray(Image.open(path).convert("L"), dtype=np.float32).ravel() for path in np.ravel(paths)]
    return np.stack(rows)


# Load the data.
train = pd.read_csv("data/train.csv", encoding="ascii")
test = pd.read_csv("data/test.csv", encoding="ascii")
sample_submission = pd.read_csv("data/sample_submission.csv", encoding="ascii")
print(f"train {train.shape}, test {test.shape}")
# Train on a random fifth of the rows: much faster, at some cost in accuracy.
train = train.sample(frac=0.2, random_state=0).reset_index(drop=True)

# Labels as strings (whole numbers without a trailing .0), encoded 0..n-1 for the model.
labels = train[TARGET]
if pd.api.types.is_float_dtype(labels):
    labels = labels.map(lambda v: str(int(v)) if float(v).is_integer() else str(v))
label_encoder = LabelEncoder()
y = label_encoder.fit_transform(labels.astype(str))
class_names = list(label_encoder.classes_)
n_classes = len(class_names)
print(f"{n_classes} classes, counts: {np.bincount(y).tolist()[:30]}")

# Each row's picture is data/images/<id>.png.
train["image_path"] = "data/images/" + train[ID_COLUMN].astype(str) + ".png"
test["image_path"] = "data/images/" + test[ID_COLUMN].astype(str) + ".png"
numeric_columns = [c for c in train.columns if c not in [ID_COLUMN, TARGET] and pd.api.types.is_numeric_dtype(train[c])]
X = train[numeric_columns + ["image_path"]]
X_test = test[numeric_columns + ["image_path"]]
print(f"features: {len(numeric_columns)} numeric, images")

# Preprocessing is part of the model, so it is fitted on training rows only.
preprocess = ColumnTransformer([
    ("numeric", SimpleImputer(strategy="most_frequent"), numeric_columns),
    ("image", FunctionTransformer(load_images), "image_path"),
])

# The model: preprocessing followed by the estimator.
estimator = GaussianNB()
model = make_pipeline(preprocess, estimator)
# A second, different model; the two predictions are averaged.
second_estimator = LogisticRegression(C=1, max_iter=1000)
second_model = make_pipeline(clone(preprocess), second_estimator)

# 5-fold cross-validation to estimate the test score.
folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
fold_scores = []
for fold, (train_index, valid_index) in enumerate(folds.split(X, y)):
    X_train, X_valid = X.iloc[train_index], X.iloc[valid_index]
    y_train, y_valid = y[train_index], y[valid_index]
    model.fit(X_train, y_train)
    second_model.fit(X_train, y_train)
    proba = model.predict_proba(X_valid)
    valid_pred_proba = np.zeros((len(proba), n_classes))
    valid_pred_proba[:, model.classes_] += proba / 2
    second_proba = second_model.predict_proba(X_valid)
    valid_pred_proba[:, second_model.classes_] += second_proba / 2
    valid_pred = valid_pred_proba.argmax(axis=1)
    fold_score = accuracy_score(y_valid, valid_pred)
    fold_scores.append(fold_score)
    print(f"fold {fold + 1}: accuracy {fold_score:.5f}")
print(f"cross-validated accuracy: {np.mean(fold_scores):.5f} +/- {np.std(fold_scores):.5f}")

# Fit on every training row.
fit_started = time.time()
model.fit(X, y)
second_model.fit(X, y)
print(f"fitted on {len(X)} rows in {time.time() - fit_started:.1f}s")

# Score on rows the model has seen: optimistic, but shows whether it learned anything.
seen = np.random.RandomState(0).permutation(len(X))[:2000]
X_train_sample, y_train_sample = X.iloc[seen], y[seen]
proba = model.predict_proba(X_train_sample)
train_sample_pred_proba = np.zeros((len(proba), n_classes))
train_sample_pred_proba[:, model.classes_] += proba / 2
second_proba = second_model.predict_proba(X_train_sample)
train_sample_pred_proba[:, second_model.classes_] += second_proba / 2
train_sample_pred = train_sample_pred_proba.argmax(axis=1)
train_score = accuracy_score(y_train_sample, train_sample_pred)
print(f"training accuracy: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
proba = model.predict_proba(X_test)
test_pred_proba = np.zeros((len(proba), n_classes))
test_pred_proba[:, model.classes_] += proba / 2
second_proba = second_model.predict_proba(X_test)
test_pred_proba[:, second_model.classes_] += second_proba / 2
test_pred = test_pred_proba.argmax(axis=1)
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
submission[sample_submission.columns[1]] = label_encoder.inverse_transform(test_pred)
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
