# plan: read.loader=semicolon;read.rows=all;features.columns=typed;features.missing=none;features.series=savgol;features.scaling=standard;target.transform=log1p;model.family=xgboost;model.multioutput=native;xgb.n_estimators=400;xgb.learning_rate=0.1;xgb.max_depth=10;xgb.subsample=0.8;validation=holdout;ensemble=none
"""Solution for task meats-composition (metric: mean_column_rmsle, lower is better).

Read the CSV files with ';' as the separator and train on all training rows. Use the
numeric columns (leaving missing values as they are), add Savitzky-Golay first and
second derivatives of the ordered series columns and standardise the features. Train an
XGBoost model (n estimators 400, learning rate 0.1, max depth 10, subsample 0.8), on
log(1 + target). Print a score on a 20% holdout, then refit on all rows and write
submission.csv.

Plan key: read.loader=semicolon; read.rows=all; features.columns=typed; features.missing=none;
features.series=savgol; features.scaling=standard; target.transform=log1p;
model.family=xgboost; model.multioutput=native; xgb.n_estimators=400;
xgb.learning_rate=0.1; xgb.max_depth=10; xgb.subsample=0.8; validation=holdout;
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
from scipy.signal import savgol_filter
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.metrics import mean_squared_log_error
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from xgboost import XGBRegressor

ID_COLUMN = "sample_id"
TARGETS = ["water", "fat", "protein"]
started = time.time()

# Load the data.
train = pd.read_csv("data/train.csv", sep=";")
test = pd.read_csv("data/test.csv", sep=";")
sample_submission = pd.read_csv("data/sample_submission.csv", sep=";")
print(f"train {train.shape}, test {test.shape}")

target_values = train[TARGETS].to_numpy(dtype=float)
# Learn log(1 + target): errors on large values stop dominating, as in the metric.
y = np.log1p(target_values)

# The x_<n> columns are one ordered series per row (a spectrum or signal), in file order.
series_columns = [c for c in train.columns if c.startswith("x_") and c[2:].isdigit()]


def series_features(frame):
    """Replaces each row's series by the series itself plus its Savitzky-Golay smoothed first and second derivatives (window 11, quadratic)."""
    values = frame[series_columns].to_numpy(dtype=float)
    first = savgol_filter(values, window_length=11, polyorder=2, deriv=1, axis=1)
    second = savgol_filter(values, window_length=11, polyorder=2, deriv=2, axis=1)
    derived = np.hstack([values, first, second])
    names = [f"series_{i}" for i in range(derived.shape[1])]
    return pd.concat([frame.drop(columns=series_columns), pd.DataFrame(derived, columns=names, index=frame.index)], axis=1)


train = series_features(train)
test = series_features(test)
print(f"{len(series_columns)} series columns -> {sum(c.startswith('series_') for c in train.columns)} derived")
numeric_columns = [c for c in train.columns if c not in [ID_COLUMN] + TARGETS and pd.api.types.is_numeric_dtype(train[c])]
X = train[numeric_columns]
X_test = test[numeric_columns]
print(f"features: {len(numeric_columns)} numeric")

# Preprocessing is part of the model, so it is fitted on training rows only.
preprocess = ColumnTransformer([
    ("numeric", StandardScaler(), numeric_columns),
])

# The model: preprocessing followed by the estimator.
estimator = TransformedTargetRegressor(regressor=XGBRegressor(n_estimators=400, learning_rate=0.1, max_depth=10, subsample=0.8, tree_method="hist", n_jobs=N_JOBS, random_state=0), transformer=StandardScaler(with_std=False))
model = make_pipeline(preprocess, estimator)

# Hold out a fifth of the training rows to estimate the test score.
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2, random_state=0)
model.fit(X_train, y_train)
valid_pred = model.predict(X_valid)
valid_pred = np.expm1(valid_pred)
valid_pred = np.clip(valid_pred, 0, None)  # the metric takes log(1 + prediction)
valid_score = np.mean(np.sqrt(mean_squared_log_error(np.expm1(y_valid), valid_pred, multioutput="raw_values")))
print(f"validation mean_column_rmsle: {valid_score:.5f}")

# Fit on every training row.
fit_started = time.time()
model.fit(X, y)
print(f"fitted on {len(X)} rows in {time.time() - fit_started:.1f}s")

# Score on rows the model has seen: optimistic, but shows whether it learned anything.
seen = np.random.RandomState(0).permutation(len(X))[:2000]
X_train_sample, y_train_sample = X.iloc[seen], y[seen]
train_sample_pred = model.predict(X_train_sample)
train_sample_pred = np.expm1(train_sample_pred)
train_sample_pred = np.clip(train_sample_pred, 0, None)  # the metric takes log(1 + prediction)
train_score = np.mean(np.sqrt(mean_squared_log_error(np.expm1(y_train_sample), train_sample_pred, multioutput="raw_values")))
print(f"training mean_column_rmsle: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
test_pred = model.predict(X_test)
test_pred = np.expm1(test_pred)
test_pred = np.clip(test_pred, 0, None)  # the metric takes log(1 + prediction)
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
for i, column in enumerate(TARGETS):
    submission[column] = test_pred[:, i]
submission = submission[list(sample_submission.columns)]
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
