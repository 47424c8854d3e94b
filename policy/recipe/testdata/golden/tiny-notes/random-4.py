# plan: read.loader=ascii;read.rows=fifth;features.columns=raw;model.family=naive_bayes;nb.variant=bernoulli;validation=none;ensemble=average;ensemble.second=knn;calibration=isotonic
"""Solution for task tiny-notes (metric: log_loss, lower is better).

Read the CSV files as ASCII text and train on a random fifth of the training rows. Give
the model every column as it comes, without preprocessing. Train a naive Bayes model
(bernoulli), with isotonic probability calibration. Average its predictions with those
of a k-nearest-neighbours model. Skip validation and write submission.csv.

Plan key: read.loader=ascii; read.rows=fifth; features.columns=raw; model.family=naive_bayes;
nb.variant=bernoulli; validation=none; ensemble=average; ensemble.second=knn;
calibration=isotonic
"""
import os
import time

# The threads this program may use (the runner sets OMP_NUM_THREADS to its share
# of the cores); more threads than cores make OpenMP threads wait on each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")
N_JOBS = int(os.environ["OMP_NUM_THREADS"])

import numpy as np
import pandas as pd
from sklearn.calibration import CalibratedClassifierCV
from sklearn.metrics import log_loss
from sklearn.naive_bayes import BernoulliNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import LabelEncoder

ID_COLUMN = "note_id"
TARGET = "label"
started = time.time()

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

# Every column as it comes, no preprocessing.
X = train.drop(columns=[ID_COLUMN, TARGET])
X_test = test.drop(columns=[ID_COLUMN])
print(f"features: {X.shape[1]} columns")

# The model.
estimator = CalibratedClassifierCV(BernoulliNB(), method="isotonic", cv=3)
model = estimator
# A second, different model; the two predictions are averaged.
second_estimator = CalibratedClassifierCV(KNeighborsClassifier(n_neighbors=15, weights="distance", n_jobs=N_JOBS), method="isotonic", cv=3)
second_model = second_estimator

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
train_sample_pred = train_sample_pred_proba
train_score = log_loss(y_train_sample, train_sample_pred, labels=np.arange(n_classes))
print(f"training log_loss: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
proba = model.predict_proba(X_test)
test_pred_proba = np.zeros((len(proba), n_classes))
test_pred_proba[:, model.classes_] += proba / 2
second_proba = second_model.predict_proba(X_test)
test_pred_proba[:, second_model.classes_] += second_proba / 2
test_pred = test_pred_proba
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
# One probability column per class, in the sample submission's order.
for column in sample_submission.columns[1:]:
    submission[column] = test_pred[:, class_names.index(column)] if column in class_names else 0.0
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
