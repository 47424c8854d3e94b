# plan: read.loader=semicolon;read.rows=all;features.columns=raw;target.transform=none;model.family=svm_rbf;model.multioutput=native;svm.C=10;validation=holdout;ensemble=average;ensemble.second=linear
"""Solution for task meats-composition (metric: mean_column_rmsle, lower is better).

Read the CSV files with ';' as the separator and train on all training rows. Give the
model every column as it comes, without preprocessing. Train a RBF-kernel SVM model (C
10). Average its predictions with those of a linear model. Print a score on a 20%
holdout, then refit on all rows and write submission.csv.

Plan key: read.loader=semicolon; read.rows=all; features.columns=raw; target.transform=none;
model.family=svm_rbf; model.multioutput=native; svm.C=10; validation=holdout;
ensemble=average; ensemble.second=linear
"""
import os
import time

# The threads this program may use (the runner sets OMP_NUM_THREADS to its share
# of the cores); more threads than cores make OpenMP threads wait on each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")
N_JOBS = int(os.environ["OMP_NUM_THREADS"])

import numpy as np
import pandas as pd
from sklearn.linear_model import Ridge
from sklearn.metrics import mean_squared_log_error
from sklearn.model_selection import train_test_split
from sklearn.svm import SVR

ID_COLUMN = "sample_id"
TARGETS = ["water", "fat", "protein"]
started = time.time()

# Load the data.
train = pd.read_csv("data/train.csv", sep=";")
test = pd.read_csv("data/test.csv", sep=";")
sample_submission = pd.read_csv("data/sample_submission.csv", sep=";")
print(f"train {train.shape}, test {test.shape}")

target_values = train[TARGETS].to_numpy(dtype=float)
y = target_values

# Every column as it comes, no preprocessing.
X = train.drop(columns=[ID_COLUMN] + TARGETS)
X_test = test.drop(columns=[ID_COLUMN])
print(f"features: {X.shape[1]} columns")

# The model.
estimator = SVR(C=10)
model = estimator
# A second, different model; the two predictions are averaged.
second_estimator = Ridge(alpha=1)
second_model = second_estimator

# Hold out a fifth of the training rows to estimate the test score.
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2, random_state=0)
model.fit(X_train, y_train)
second_model.fit(X_train, y_train)
valid_pred = model.predict(X_valid)
second_pred = second_model.predict(X_valid)
valid_pred = (valid_pred + second_pred) / 2
valid_pred = np.clip(valid_pred, 0, None)  # the metric takes log(1 + prediction)
valid_score = np.mean(np.sqrt(mean_squared_log_error(y_valid, valid_pred, multioutput="raw_values")))
print(f"validation mean_column_rmsle: {valid_score:.5f}")

# Fit on every training row.
fit_started = time.time()
model.fit(X, y)
second_model.fit(X, y)
print(f"fitted on {len(X)} rows in {time.time() - fit_started:.1f}s")

# Score on rows the model has seen: optimistic, but shows whether it learned anything.
seen = np.random.RandomState(0).permutation(len(X))[:2000]
X_train_sample, y_train_sample = X.iloc[seen], y[seen]
train_sample_pred = model.predict(X_train_sample)
second_pred = second_model.predict(X_train_sample)
train_sample_pred = (train_sample_pred + second_pred) / 2
train_sample_pred = np.clip(train_sample_pred, 0, None)  # the metric takes log(1 + prediction)
train_score = np.mean(np.sqrt(mean_squared_log_error(y_train_sample, train_sample_pred, multioutput="raw_values")))
print(f"training mean_column_rmsle: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
test_pred = model.predict(X_test)
second_pred = second_model.predict(X_test)
test_pred = (test_pred + second_pred) / 2
test_pred = np.clip(test_pred, 0, None)  # the metric takes log(1 + prediction)
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
for i, column in enumerate(TARGETS):
    submission[column] = test_pred[:, i]
submission = submission[list(sample_submission.columns)]
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
