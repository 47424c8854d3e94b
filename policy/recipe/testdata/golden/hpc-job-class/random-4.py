# plan: read.loader=ascii;read.rows=fifth;features.columns=raw;target.ordinal=classes;model.family=xgboost;xgb.n_estimators=100;xgb.learning_rate=0.3;xgb.max_depth=10;xgb.subsample=1.0;validation=cv5;ensemble=none
"""Solution for task hpc-job-class (metric: qwk, higher is better).

Read the CSV files as ASCII text and train on a random fifth of the training rows. Give
the model every column as it comes, without preprocessing. Train an XGBoost model (n
estimators 100, learning rate 0.3, max depth 10, subsample 1.0). Print a 5-fold
cross-validated score, then refit on all rows and write submission.csv.

Plan key: read.loader=ascii; read.rows=fifth; features.columns=raw; target.ordinal=classes;
model.family=xgboost; xgb.n_estimators=100; xgb.learning_rate=0.3; xgb.max_depth=10;
xgb.subsample=1.0; validation=cv5; ensemble=none
"""
import os
import time

# The threads this program may use (the runner sets OMP_NUM_THREADS to its share
# of the cores); more threads than cores make OpenMP threads wait on each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")
N_JOBS = int(os.environ["OMP_NUM_THREADS"])

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import LabelEncoder
from xgboost import XGBClassifier

ID_COLUMN = "job_id"
TARGET = "class"
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
estimator = XGBClassifier(n_estimators=100, learning_rate=0.3, max_depth=10, subsample=1.0, tree_method="hist", n_jobs=N_JOBS, random_state=0)
model = estimator

# 5-fold cross-validation to estimate the test score.
folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
fold_scores = []
for fold, (train_index, valid_index) in enumerate(folds.split(X, y)):
    X_train, X_valid = X.iloc[train_index], X.iloc[valid_index]
    y_train, y_valid = y[train_index], y[valid_index]
    model.fit(X_train, y_train)
    valid_pred = model.predict(X_valid)
    fold_score = cohen_kappa_score(label_encoder.classes_[y_valid].astype(float), label_encoder.classes_[valid_pred].astype(float), weights="quadratic")
    fold_scores.append(fold_score)
    print(f"fold {fold + 1}: qwk {fold_score:.5f}")
print(f"cross-validated qwk: {np.mean(fold_scores):.5f} +/- {np.std(fold_scores):.5f}")

# Fit on every training row.
fit_started = time.time()
model.fit(X, y)
print(f"fitted on {len(X)} rows in {time.time() - fit_started:.1f}s")

# Score on rows the model has seen: optimistic, but shows whether it learned anything.
seen = np.random.RandomState(0).permutation(len(X))[:2000]
X_train_sample, y_train_sample = X.iloc[seen], y[seen]
train_sample_pred = model.predict(X_train_sample)
train_score = cohen_kappa_score(label_encoder.classes_[y_train_sample].astype(float), label_encoder.classes_[train_sample_pred].astype(float), weights="quadratic")
print(f"training qwk: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
test_pred = model.predict(X_test)
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
submission[sample_submission.columns[1]] = label_encoder.inverse_transform(test_pred)
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
