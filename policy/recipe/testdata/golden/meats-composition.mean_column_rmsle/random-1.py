# plan: read.loader=semicolon;read.rows=all;features.columns=raw;target.transform=none;model.family=svm_rbf;model.multioutput=per_target;svm.C=1;validation=cv5;ensemble=none
"""Solution for task meats-composition (metric: mean_column_rmsle, lower is better).

Read the CSV files with ';' as the separator and train on all training rows. Give the
model every column as it comes, without preprocessing. Train a RBF-kernel SVM model (C
1), one per target. Print a 5-fold cross-validated score, then refit on all rows and
write submission.csv.

Plan key: read.loader=semicolon; read.rows=all; features.columns=raw; target.transform=none;
model.family=svm_rbf; model.multioutput=per_target; svm.C=1; validation=cv5;
ensemble=none
"""
import os
import time

# The threads this program may use (the runner sets OMP_NUM_THREADS to its share
# of the cores); more threads than cores make OpenMP threads wait on each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")
N_JOBS = int(os.environ["OMP_NUM_THREADS"])

import numpy as np
import pandas as pd
from sklearn.metrics import mean_squared_log_error
from sklearn.model_selection import KFold
from sklearn.multioutput import MultiOutputRegressor
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
estimator = MultiOutputRegressor(SVR(C=1))
model = estimator

# 5-fold cross-validation to estimate the test score.
folds = KFold(n_splits=5, shuffle=True, random_state=0)
fold_scores = []
for fold, (train_index, valid_index) in enumerate(folds.split(X, y)):
    X_train, X_valid = X.iloc[train_index], X.iloc[valid_index]
    y_train, y_valid = y[train_index], y[valid_index]
    model.fit(X_train, y_train)
    valid_pred = model.predict(X_valid)
    valid_pred = np.clip(valid_pred, 0, None)  # the metric takes log(1 + prediction)
    fold_score = np.mean(np.sqrt(mean_squared_log_error(y_valid, valid_pred, multioutput="raw_values")))
    fold_scores.append(fold_score)
    print(f"fold {fold + 1}: mean_column_rmsle {fold_score:.5f}")
print(f"cross-validated mean_column_rmsle: {np.mean(fold_scores):.5f} +/- {np.std(fold_scores):.5f}")

# Fit on every training row.
fit_started = time.time()
model.fit(X, y)
print(f"fitted on {len(X)} rows in {time.time() - fit_started:.1f}s")

# Score on rows the model has seen: optimistic, but shows whether it learned anything.
seen = np.random.RandomState(0).permutation(len(X))[:2000]
X_train_sample, y_train_sample = X.iloc[seen], y[seen]
train_sample_pred = model.predict(X_train_sample)
train_sample_pred = np.clip(train_sample_pred, 0, None)  # the metric takes log(1 + prediction)
train_score = np.mean(np.sqrt(mean_squared_log_error(y_train_sample, train_sample_pred, multioutput="raw_values")))
print(f"training mean_column_rmsle: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
test_pred = model.predict(X_test)
test_pred = np.clip(test_pred, 0, None)  # the metric takes log(1 + prediction)
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
for i, column in enumerate(TARGETS):
    submission[column] = test_pred[:, i]
submission = submission[list(sample_submission.columns)]
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
