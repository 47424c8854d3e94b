# plan: read.loader=semicolon;read.rows=all;features.columns=typed;features.missing=none;features.categorical=onehot;features.text_columns=joined;features.text=tfidf_word_char;features.text_max=20000;features.dates=parts;features.high_card=drop;features.scaling=none;target.transform=none;model.family=linear_svm;svm.C=1;validation=holdout;ensemble=none
"""Solution for task tiny-events (metric: rmse, lower is better).

Read the CSV files with ';' as the separator and train on all training rows. Use the
numeric columns (leaving missing values as they are), one-hot encode categorical
columns, turn text into TF-IDF word 1-2-grams and character 2-5-grams side by side (at
most 20000 features), the text columns joined into one, turn dates into year, month,
day, weekday, hour and days since 1970 and drop many-level categorical columns. Train a
linear SVM model (C 1). Print a score on a 20% holdout, then refit on all rows and write
submission.csv.

Plan key: read.loader=semicolon; read.rows=all; features.columns=typed; features.missing=none;
features.categorical=onehot; features.text_columns=joined;
features.text=tfidf_word_char; features.text_max=20000; features.dates=parts;
features.high_card=drop; features.scaling=none; target.transform=none;
model.family=linear_svm; svm.C=1; validation=holdout; ensemble=none
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
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline, make_union
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
from sklearn.svm import LinearSVR

ID_COLUMN = "event_id"
TARGET = "attendance"
started = time.time()

# Load the data.
train = pd.read_csv("data/train.csv", sep=";")
test = pd.read_csv("data/test.csv", sep=";")
sample_submission = pd.read_csv("data/sample_submission.csv", sep=";")
print(f"train {train.shape}, test {test.shape}")

target_values = train[TARGET].to_numpy(dtype=float)
y = target_values

# Read as numbers or booleans, these columns are labels: strings of whole numbers (True is "1").
for column in ["outdoor"]:
    train[column] = train[column].map(lambda v: v if pd.isna(v) or isinstance(v, str) else str(int(v)))
    test[column] = test[column].map(lambda v: v if pd.isna(v) or isinstance(v, str) else str(int(v)))

# Date columns and the format each is written in.
date_columns = {"day": "%Y-%m-%d", "logged_at": "%Y-%m-%d %H:%M:%S"}


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

# Read as numbers or booleans, but ids and labels rather than quantities.
not_numeric = ["record_id", "user_id", "outdoor"]
numeric_columns = [c for c in train.columns if c not in [ID_COLUMN, TARGET] + not_numeric and pd.api.types.is_numeric_dtype(train[c])]
categorical_columns = ["outdoor"]
# The text columns joined into one document per row, with one vocabulary.
train["joined_text"] = train[["title", "notes"]].fillna("").astype(str).agg(" ".join, axis=1)
test["joined_text"] = test[["title", "notes"]].fillna("").astype(str).agg(" ".join, axis=1)
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
estimator = LinearSVR(C=1)
model = make_pipeline(preprocess, estimator)

# Hold out a fifth of the training rows to estimate the test score.
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2, random_state=0)
model.fit(X_train, y_train)
valid_pred = model.predict(X_valid)
valid_score = np.sqrt(mean_squared_error(y_valid, valid_pred))
print(f"validation rmse: {valid_score:.5f}")

# Fit on every training row.
fit_started = time.time()
model.fit(X, y)
print(f"fitted on {len(X)} rows in {time.time() - fit_started:.1f}s")

# Score on rows the model has seen: optimistic, but shows whether it learned anything.
seen = np.random.RandomState(0).permutation(len(X))[:2000]
X_train_sample, y_train_sample = X.iloc[seen], y[seen]
train_sample_pred = model.predict(X_train_sample)
train_score = np.sqrt(mean_squared_error(y_train_sample, train_sample_pred))
print(f"training rmse: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
test_pred = model.predict(X_test)
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
submission[sample_submission.columns[1]] = test_pred
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
