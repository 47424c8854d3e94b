# plan: read.loader=default;read.rows=all;features.columns=raw;target.transform=none;model.family=extra_trees;forest.n_estimators=600;forest.max_depth=20;validation=none;ensemble=average;ensemble.second=random_forest
"""Solution for task tiny-events (metric: rmse, lower is better).

Read the CSV files with pandas' default settings and train on all training rows. Give
the model every column as it comes, without preprocessing. Train an extra-trees forest
model (n estimators 600, max depth 20). Average its predictions with those of a random
forest model. Skip validation and write submission.csv.

Plan key: read.loader=default; read.rows=all; features.columns=raw; target.transform=none;
model.family=extra_trees; forest.n_estimators=600; forest.max_depth=20; validation=none;
ensemble=average; ensemble.second=random_forest
"""
import os
import time

# The threads this program may use (the runner sets OMP_NUM_THREADS to its share
# of the cores); more threads than cores make OpenMP threads wait on each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")
N_JOBS = int(os.environ["OMP_NUM_THREADS"])

import numpy as np
import pandas as pd
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.metrics import mean_squared_error

ID_COLUMN = "event_id"
TARGET = "attendance"
started = time.time()

# Load the data.
train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
sample_submission = pd.read_csv("data/sample_submission.csv")
print(f"train {train.shape}, test {test.shape}")

target_values = train[TARGET].to_numpy(dtype=float)
y = target_values

# Every column as it comes, no preprocessing.
X = train.drop(columns=[ID_COLUMN, TARGET])
X_test = test.drop(columns=[ID_COLUMN])
print(f"features: {X.shape[1]} columns")

# The model.
estimator = ExtraTreesRegressor(n_estimators=600, max_depth=20, n_jobs=N_JOBS, random_state=0)
model = estimator
# A second, different model; the two predictions are averaged.
second_estimator = RandomForestRegressor(n_estimators=300, max_depth=None, n_jobs=N_JOBS, random_state=0)
second_model = second_estimator

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
