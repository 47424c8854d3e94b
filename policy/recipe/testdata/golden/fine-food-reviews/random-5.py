# plan: read.loader=semicolon;read.rows=all;features.columns=raw;model.family=random_forest;forest.n_estimators=600;forest.max_depth=20;validation=cv5;ensemble=none;calibration=sigmoid
"""Solution for task fine-food-reviews (metric: auc, higher is better).

Read the CSV files with ';' as the separator and train on all training rows. Give the
model every column as it comes, without preprocessing. Train a random forest model (n
estimators 600, max depth 20), with sigmoid probability calibration. Print a 5-fold
cross-validated score, then refit on all rows and write submission.csv.

Plan key: read.loader=semicolon; read.rows=all; features.columns=raw; model.family=random_forest;
forest.n_estimators=600; forest.max_depth=20; validation=cv5; ensemble=none;
calibration=sigmoid
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
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import LabelEncoder

ID_COLUMN = "review_id"
TARGET = "great"
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
positive = class_names.index("1")  # the class whose probability is submitted

# Every column as it comes, no preprocessing.
X = train.drop(columns=[ID_COLUMN, TARGET])
X_test = test.drop(columns=[ID_COLUMN])
print(f"features: {X.shape[1]} columns")

# The model.
estimator = CalibratedClassifierCV(RandomForestClassifier(n_estimators=600, max_depth=20, n_jobs=N_JOBS, random_state=0), method="sigmoid", cv=3)
model = estimator

# 5-fold cross-validation to estimate the test score.
folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
fold_scores = []
for fold, (train_index, valid_index) in enumerate(folds.split(X, y)):
    X_train, X_valid = X.iloc[train_index], X.iloc[valid_index]
    y_train, y_valid = y[train_index], y[valid_index]
    model.fit(X_train, y_train)
    proba = model.predict_proba(X_valid)
    valid_pred_proba = np.zeros((len(proba), n_classes))
    valid_pred_proba[:, model.classes_] += proba
    valid_pred = valid_pred_proba[:, positive]
    fold_score = roc_auc_score(y_valid == positive, valid_pred)
    fold_scores.append(fold_score)
    print(f"fold {fold + 1}: auc {fold_score:.5f}")
print(f"cross-validated auc: {np.mean(fold_scores):.5f} +/- {np.std(fold_scores):.5f}")

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
train_sample_pred = train_sample_pred_proba[:, positive]
train_score = roc_auc_score(y_train_sample == positive, train_sample_pred)
print(f"training auc: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
proba = model.predict_proba(X_test)
test_pred_proba = np.zeros((len(proba), n_classes))
test_pred_proba[:, model.classes_] += proba
test_pred = test_pred_proba[:, positive]
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
submission[sample_submission.columns[1]] = test_pred
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
