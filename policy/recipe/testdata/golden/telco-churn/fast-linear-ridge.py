# plan: read.loader=default;read.rows=all;features.columns=typed;features.missing=median;features.categorical=ordinal;features.scaling=standard;model.family=ridge;ridge.alpha=1;validation=none;ensemble=none;calibration=none
"""Solution for task telco-churn (metric: auc, higher is better).

Read the CSV files with pandas' default settings and train on all training rows. Use the
numeric columns (imputing missing values with the median), encode categorical columns as
integers and standardise the features. Train a ridge model (alpha 1). Skip validation
and write submission.csv.

Plan key: read.loader=default; read.rows=all; features.columns=typed; features.missing=median;
features.categorical=ordinal; features.scaling=standard; model.family=ridge;
ridge.alpha=1; validation=none; ensemble=none; calibration=none
"""
import os
import time

# The threads this program may use (the runner sets OMP_NUM_THREADS to its share
# of the cores); more threads than cores make OpenMP threads wait on each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")
N_JOBS = int(os.environ["OMP_NUM_THREADS"])

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import RidgeClassifier
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import LabelEncoder, OrdinalEncoder, StandardScaler

ID_COLUMN = "customer_id"
TARGET = "churn"
started = time.time()

# Load the data.
train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
sample_submission = pd.read_csv("data/sample_submission.csv")
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

numeric_columns = [c for c in train.columns if c not in [ID_COLUMN, TARGET] and pd.api.types.is_numeric_dtype(train[c])]
categorical_columns = ["multiple_lines", "internet_service", "online_security", "online_backup", "device_protection", "tech_support", "streaming_tv", "streaming_movies", "contract", "payment_method"]
X = train[numeric_columns + categorical_columns]
X_test = test[numeric_columns + categorical_columns]
print(f"features: {len(numeric_columns)} numeric, {len(categorical_columns)} categorical")

# Preprocessing is part of the model, so it is fitted on training rows only.
preprocess = ColumnTransformer([
    ("numeric", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric_columns),
    ("categorical", make_pipeline(SimpleImputer(strategy="most_frequent"), OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)), categorical_columns),
])

# The model: preprocessing followed by the estimator.
estimator = RidgeClassifier(alpha=1)
model = make_pipeline(preprocess, estimator)

# Fit on every training row.
fit_started = time.time()
model.fit(X, y)
print(f"fitted on {len(X)} rows in {time.time() - fit_started:.1f}s")

# Score on rows the model has seen: optimistic, but shows whether it learned anything.
seen = np.random.RandomState(0).permutation(len(X))[:2000]
X_train_sample, y_train_sample = X.iloc[seen], y[seen]
# RidgeClassifier has no predict_proba: a softmax of its decision scores stands in for the
# probabilities that are combined or submitted (uncalibrated, but a valid prediction).
scores = model.decision_function(X_train_sample)
if scores.ndim == 1:  # two classes: the score of the second
    scores = np.column_stack([-scores, scores])
proba = np.exp(scores - scores.max(axis=1, keepdims=True))
proba /= proba.sum(axis=1, keepdims=True)
train_sample_pred_proba = np.zeros((len(proba), n_classes))
train_sample_pred_proba[:, model.classes_] += proba
train_sample_pred = train_sample_pred_proba[:, positive]
train_score = roc_auc_score(y_train_sample == positive, train_sample_pred)
print(f"training auc: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
# RidgeClassifier has no predict_proba: a softmax of its decision scores stands in for the
# probabilities that are combined or submitted (uncalibrated, but a valid prediction).
scores = model.decision_function(X_test)
if scores.ndim == 1:  # two classes: the score of the second
    scores = np.column_stack([-scores, scores])
proba = np.exp(scores - scores.max(axis=1, keepdims=True))
proba /= proba.sum(axis=1, keepdims=True)
test_pred_proba = np.zeros((len(proba), n_classes))
test_pred_proba[:, model.classes_] += proba
test_pred = test_pred_proba[:, positive]
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
submission[sample_submission.columns[1]] = test_pred
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
