# plan: read.loader=semicolon;read.rows=all;features.columns=typed;features.missing=none;features.categorical=onehot;features.text_columns=joined;features.text=tfidf_word_char;features.text_max=20000;features.dates=parts;features.high_card=drop;features.scaling=none;model.family=linear_svm;svm.C=1;validation=holdout;ensemble=average;ensemble.second=hist_gb;calibration=isotonic
"""Solution for task tiny-notes (metric: log_loss, lower is better).

Read the CSV files with ';' as the separator and train on all training rows. Use the
numeric columns (leaving missing values as they are), one-hot encode categorical
columns, turn text into TF-IDF word 1-2-grams and character 2-5-grams side by side (at
most 20000 features), the text columns joined into one, turn dates into year, month,
day, weekday, hour and days since 1970 and drop many-level categorical columns. Train a
linear SVM model (C 1), with isotonic probability calibration. Average its predictions
with those of a histogram gradient boosting model. Print a score on a 20% holdout, then
refit on all rows and write submission.csv.

Plan key: read.loader=semicolon; read.rows=all; features.columns=typed; features.missing=none;
features.categorical=onehot; features.text_columns=joined;
features.text=tfidf_word_char; features.text_max=20000; features.dates=parts;
features.high_card=drop; features.scaling=none; model.family=linear_svm; svm.C=1;
validation=holdout; ensemble=average; ensemble.second=hist_gb; calibration=isotonic
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
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline, make_union
from sklearn.preprocessing import FunctionTransformer, LabelEncoder, OneHotEncoder
from sklearn.svm import LinearSVC

ID_COLUMN = "note_id"
TARGET = "label"
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

# Date columns and the format each is written in.
date_columns = {"written": "%Y-%m-%d"}


def date_parts(frame):
    """Replaces each date column by numbers: year, month, day, weekday, hour (date-times) and days since 1970."""
    for column, date_format in date_columns.items():
        when = pd.to_datetime(frame[column], format=date_format, errors="coerce")
        frame[column + "_year"] = when.dt.year
        frame[column + "_month"] = when.dt.month
        frame[column + "_day"] = when.dt.day
        frame[column + "_weekday"] = when.dt.weekday
        if "%H" in date_format:
            frame[column + "_hour"] = when.dt.hour
        frame[column + "_days"] = (when - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1)
    return frame.drop(columns=list(date_columns))


train = date_parts(train)
test = date_parts(test)

numeric_columns = [c for c in train.columns if c not in [ID_COLUMN, TARGET] and pd.api.types.is_numeric_dtype(train[c])]
categorical_columns = ["kind"]
# The text columns joined into one document per row, with one vocabulary.
train["joined_text"] = train[["name", "definition", "examples"]].fillna("").astype(str).agg(" ".join, axis=1)
test["joined_text"] = test[["name", "definition", "examples"]].fillna("").astype(str).agg(" ".join, axis=1)
text_columns = ["joined_text"]
X = train[numeric_columns + categorical_columns + text_columns]
X_test = test[numeric_columns + categorical_columns + text_columns]
print(f"features: {len(numeric_columns)} numeric, {len(categorical_columns)} categorical, {len(text_columns)} text")

# Preprocessing is part of the model, so it is fitted on training rows only.
preprocess = ColumnTransformer([
    ("numeric", FunctionTransformer(), numeric_columns),
    ("categorical", OneHotEncoder(handle_unknown="ignore"), categorical_columns),
    ("text_joined_text", make_union(TfidfVectorizer(ngram_range=(1, 2), max_features=20000, sublinear_tf=True), TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), max_features=20000, sublinear_tf=True)), "joined_text"),
])

# The model: preprocessing followed by the estimator.
estimator = CalibratedClassifierCV(LinearSVC(C=1), method="isotonic", cv=3)
model = make_pipeline(preprocess, estimator)
# A second, different model; the two predictions are averaged.
second_estimator = CalibratedClassifierCV(HistGradientBoostingClassifier(max_iter=300, learning_rate=0.1, max_leaf_nodes=31, random_state=0), method="isotonic", cv=3)
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
valid_pred = valid_pred_proba
valid_score = log_loss(y_valid, valid_pred, labels=np.arange(n_classes))
print(f"validation log_loss: {valid_score:.5f}")

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
train_sample_pred = train_sample_pred_proba
train_score = log_loss(y_train_sample, train_sample_pred, labels=np.arange(n_classes))
print(f"training log_loss: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
proba = model.predict_proba(X_test)
test_pred_proba = np.zeros((len(proba), n_classes))
test_pred_proba[:, model.classes_] += proba / 2
second_proba = second_model.predict_proba(X_test)
test_pred_proba[:, second_model.classes_] += second_proba / 2
test_pred = test_pred_proba
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
# One probability column per class, in the sample submission's order.
for column in sample_submission.columns[1:]:
    submission[column] = test_pred[:, class_names.index(column)] if column in class_names else 0.0
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
