# plan: read.loader=semicolon;read.rows=all;features.columns=typed;features.missing=none;features.scaling=none;model.family=mlp;mlp.hidden=256_128;mlp.max_iter=200;validation=holdout;ensemble=average;ensemble.second=random_forest
"""Solution for task letter-recognition (metric: accuracy, higher is better).

Read the CSV files with ';' as the separator and train on all training rows. Use the
numeric columns (leaving missing values as they are). Train a multi-layer perceptron
model (hidden 256_128, max iter 200). Average its predictions with those of a random
forest model. Print a score on a 20% holdout, then refit on all rows and write
submission.csv.

Plan key: read.loader=semicolon; read.rows=all; features.columns=typed; features.missing=none;
features.scaling=none; model.family=mlp; mlp.hidden=256_128; mlp.max_iter=200;
validation=holdout; ensemble=average; ensemble.second=random_forest
"""
import os
import time

# The threads this program may use (the runner sets OMP_NUM_THREADS to its share
# of the cores); more threads than cores make OpenMP threads wait on each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")
N_JOBS = int(os.environ["OMP_NUM_THREADS"])

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, LabelEncoder

ID_COLUMN = "id"
TARGET = "lettr"
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
X = train[numeric_columns]
X_test = test[numeric_columns]
print(f"features: {len(numeric_columns)} numeric")

# Preprocessing is part of the model, so it is fitted on training rows only.
preprocess = ColumnTransformer([
    ("numeric", FunctionTransformer(), numeric_columns),
])

# The model: preprocessing followed by the estimator.
estimator = MLPClassifier(hidden_layer_sizes=(256, 128), max_iter=200, random_state=0)
model = make_pipeline(preprocess, estimator)
# A second, different model; the two predictions are averaged.
second_estimator = RandomForestClassifier(n_estimators=300, max_depth=None, n_jobs=N_JOBS, random_state=0)
second_model = make_pipeline(clone(preprocess), second_estimator)

# Hold out a fifth of the training rows to estimate the test score.
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2, random_state=0)
model.fit(X_train, y_train)
second_model.fit(X_train, y_train)
proba = model.predict_proba(X_valid)
valid_pred_proba = np.zeros((len(proba), n_classes))
valid_pred_proba[:, model.classes_] += proba / 2
second_proba = second_model.predict_proba(X_valid)
valid_pred_proba[:, second_model.classes_] += second_proba / 2
valid_pred = valid_pred_proba.argmax(axis=1)
valid_score = accuracy_score(y_valid, valid_pred)
print(f"validation accuracy: {valid_score:.5f}")

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
