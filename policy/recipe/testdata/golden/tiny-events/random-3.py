# plan: read.loader=default;read.rows=half;features.columns=raw;target.transform=none;model.family=extra_trees;forest.n_estimators=50;forest.max_depth=8;validation=holdout;ensemble=average;ensemble.second=linear
"""Solution for task tiny-events (metric: rmse, lower is better).

Read the CSV files with pandas' default settings and train on a random half of the
training rows. Give the model every column as it comes, without preprocessing. Train an
extra-trees forest model (n estimators 50, max depth 8). Average its predictions with
those of a linear model. Print a score on a 20% holdout, then refit on all rows and
write submission.csv.

Plan key: read.loader=default; read.rows=half; features.columns=raw; target.transform=none;
model.family=extra_trees; forest.n_estimators=50; forest.max_depth=8;
validation=holdout; ensemble=average; ensemble.second=linear
"""
import os
import time

# The threads this program may use (the runner sets OMP_NUM_THREADS to its share
# of the cores); more threads than cores make OpenMP threads wait on each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")
N_JOBS = int(os.environ["OMP_NUM_THREADS"])

import numpy as np
import pandas as pd
from sklearn.ensemble import ExtraTreesRegressor
from sklearn.linear_model import Ridge
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import train_test_split

ID_COLUMN = "event_id"
TARGET = "attendance"
started = time.time()

# Load the data.
train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
sample_submission = pd.read_csv("data/sample_submission.csv")
print(f"train {train.shape}, test {test.shape}")
# Train on a random half of the rows: faster, at some cost in accuracy.
train = train.sample(frac=0.5, random_state=0).reset_index(drop=True)

target_values = train[TARGET].to_numpy(dtype=float)
y = target_values

# Every column as it comes, no preprocessing.
X = train.drop(columns=[ID_COLUMN, TARGET])
X_test = test.drop(columns=[ID_COLUMN])
print(f"features: {X.shape[1]} columns")

# The model.
estimator = ExtraTreesRegressor(n_estimators=50, max_depth=8, n_jobs=N_JOBS, random_state=0)
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
valid_score = np.sqrt(mean_squared_error(y_valid, valid_pred))
print(f"validation rmse: {valid_score:.5f}")

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
train_score = np.sqrt(mean_squared_error(y_train_sample, train_sample_pred))
print(f"training rmse: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
test_pred = model.predict(X_test)
second_pred = second_model.predict(X_test)
test_pred = (test_pred + second_pred) / 2
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
submission[sample_submission.columns[1]] = test_pred
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
