# plan: read.loader=semicolon;read.rows=all;features.columns=typed;features.missing=none;features.text=hashing;features.text_max=20000;features.scaling=none;model.family=knn;knn.n_neighbors=3;knn.weights=uniform;validation=holdout;ensemble=none;calibration=isotonic
"""Solution for task austen-authorship (metric: log_loss, lower is better).

Read the CSV files with ';' as the separator and train on all training rows. Use the
numeric columns (leaving missing values as they are) and turn text into hashed word
counts (at most 20000 features). Train a k-nearest-neighbours model (n neighbors 3,
weights uniform), with isotonic probability calibration. Print a score on a 20% holdout,
then refit on all rows and write submission.csv.

Plan key: read.loader=semicolon; read.rows=all; features.columns=typed; features.missing=none;
features.text=hashing; features.text_max=20000; features.scaling=none; model.family=knn;
knn.n_neighbors=3; knn.weights=uniform; validation=holdout; ensemble=none;
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
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, LabelEncoder

ID_COLUMN = "passage_id"
TARGET = "book"
started = time.time()

# Load the data.
train = pd.read_csv("data/train.csv", sep=";")
test = pd.read_csv("data/test.csv", sep=";")
sample_submission = pd.read_csv("data/sample_submission.csv", sep=";")
print(f"train {train.shape}, test {test.shape}")

# Labels as strings (whole numbers without a trailing .0), encoded 0..n-1 for the model.
labels = train[TARGET]
if pd.api.types.is_float_dtype(labels):
    labels = labels.map(lambda v: str(int(v)) if float(v).is_integer() else str(v))
label_encoder = LabelEncoder()
y = label_encoder.fit_transform(labels.astype(str))
class_names = list(label_encoder.classes_)
n_classes = len(class_names)
print(f"{n_classes} classes, counts: {np.bincount(y).tolist()[:30]}")

numeric_columns = [c for c in train.columns if c not in [ID_COLUMN, TARGET] and pd.api.types.is_numeric_dtype(train[c])]
text_columns = ["text"]
# Missing text is empty text (a vectoriser takes no NaN).
train[text_columns] = train[text_columns].fillna("")
test[text_columns] = test[text_columns].fillna("")
X = train[numeric_columns + text_columns]
X_test = test[numeric_columns + text_columns]
print(f"features: {len(numeric_columns)} numeric, {len(text_columns)} text")

# Preprocessing is part of the model, so it is fitted on training rows only.
preprocess = ColumnTransformer([
    ("numeric", FunctionTransformer(), numeric_columns),
    ("text_text", HashingVectorizer(n_features=2**15, alternate_sign=False), "text"),
])

# The model: preprocessing followed by the estimator.
estimator = CalibratedClassifierCV(KNeighborsClassifier(n_neighbors=3, weights="uniform", n_jobs=N_JOBS), method="isotonic", cv=3)
model = make_pipeline(preprocess, estimator)

# Hold out a fifth of the training rows to estimate the test score.
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2, random_state=0)
model.fit(X_train, y_train)
proba = model.predict_proba(X_valid)
valid_pred_proba = np.zeros((len(proba), n_classes))
valid_pred_proba[:, model.classes_] += proba
valid_pred = valid_pred_proba
valid_score = log_loss(y_valid, valid_pred, labels=np.arange(n_classes))
print(f"validation log_loss: {valid_score:.5f}")

# Fit on every training row.
fit_started = time.time()
model.fit(X, y)
print(f"fitted on {len(X)} rows in {time.time() - fit_started:.1f}s")

# Score on rows the model has seen: optimistic, but shows whether it learned anything.
seen = np.random.RandomState(0).permutation(len(X))[:2000]
X_train_sample, y_train_sample = X.iloc[seen], y[seen]
proba = model.predict_proba(X_train_sample)
train_sample_pred_proba = np.zeros((len(proba), n_classes))
train_sample_pred_proba[:, model.classes_] += proba
train_sample_pred = train_sample_pred_proba
train_score = log_loss(y_train_sample, train_sample_pred, labels=np.arange(n_classes))
print(f"training log_loss: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
proba = model.predict_proba(X_test)
test_pred_proba = np.zeros((len(proba), n_classes))
test_pred_proba[:, model.classes_] += proba
test_pred = test_pred_proba
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
# One probability column per class, in the sample submission's order.
for column in sample_submission.columns[1:]:
    submission[column] = test_pred[:, class_names.index(column)] if column in class_names else 0.0
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
