# plan: read.loader=default;read.rows=all;features.columns=typed;features.missing=median;features.categorical=onehot;features.text_columns=per_column;features.text=tfidf_word_char;features.text_max=20000;features.dates=parts;features.high_card=target_mean;features.scaling=standard;target.transform=none;model.family=xgboost;xgb.n_estimators=400;xgb.learning_rate=0.1;xgb.max_depth=6;xgb.subsample=0.8;validation=none;ensemble=none
"""Solution for task tiny-events (metric: rmse, lower is better).

Read the CSV files with pandas' default settings and train on all training rows. Use the
numeric columns (imputing missing values with the median), one-hot encode categorical
columns, turn text into TF-IDF word 1-2-grams and character 2-5-grams side by side (at
most 20000 features), each text column with its own vocabulary, turn dates into year,
month, day, weekday, hour and days since 1970, encode many-level categorical columns by
the out-of-fold mean target per level and standardise the features. Train an XGBoost
model (n estimators 400, learning rate 0.1, max depth 6, subsample 0.8). Skip validation
and write submission.csv.

Plan key: read.loader=default; read.rows=all; features.columns=typed; features.missing=median;
features.categorical=onehot; features.text_columns=per_column;
features.text=tfidf_word_char; features.text_max=20000; features.dates=parts;
features.high_card=target_mean; features.scaling=standard; target.transform=none;
model.family=xgboost; xgb.n_estimators=400; xgb.learning_rate=0.1; xgb.max_depth=6;
xgb.subsample=0.8; validation=none; ensemble=none
"""
import os
import time

# The threads this program may use (the runner sets OMP_NUM_THREADS to its share
# of the cores); more threads than cores make OpenMP threads wait on each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")
N_JOBS = int(os.environ["OMP_NUM_THREADS"])

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.impute import SimpleImputer
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline, make_union
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from xgboost import XGBRegressor

ID_COLUMN = "event_id"
TARGET = "attendance"
started = time.time()

class TargetMeanEncoder(BaseEstimator, TransformerMixin):
    """Replaces each level by the mean target of the training rows with that level (per class
    for classes), shrunk toward the overall mean by `smoothing` rows' worth. fit_transform
    encodes each training row with means from the other folds, so no row sees its own target;
    transform uses every training row."""

    def __init__(self, per_class=False, smoothing=10.0):
        self.per_class = per_class
        self.smoothing = smoothing

    def _targets(self, y):
        y = np.asarray(y)
        if not self.per_class:
            return y.reshape(len(y), -1).astype(float)
        targets = (y.reshape(-1, 1) == self.classes_).astype(float)
        return targets[:, 1:] if len(self.classes_) == 2 else targets

    def _table(self, levels, targets, prior):
        grouped = pd.DataFrame(targets).groupby(levels)
        counts = grouped.size()
        means = (grouped.sum().to_numpy() + self.smoothing * prior) / (counts.to_numpy()[:, None] + self.smoothing)
        return pd.DataFrame(means, index=counts.index)

    def _encode(self, levels, tables, prior):
        parts = [table.reindex(levels[:, j]).to_numpy() for j, table in enumerate(tables)]
        return np.hstack([np.where(np.isnan(part), prior, part) for part in parts])

    def fit(self, X, y):
        self.classes_ = np.unique(y) if self.per_class else None
        levels, targets = pd.DataFrame(X).astype(str).to_numpy(), self._targets(y)
        self.prior_ = targets.mean(axis=0)
        self.tables_ = [self._table(levels[:, j], targets, self.prior_) for j in range(levels.shape[1])]
        return self

    def transform(self, X):
        return self._encode(pd.DataFrame(X).astype(str).to_numpy(), self.tables_, self.prior_)

    def fit_transform(self, X, y):
        self.fit(X, y)
        levels, targets = pd.DataFrame(X).astype(str).to_numpy(), self._targets(y)
        encoded = np.zeros((len(levels), levels.shape[1] * targets.shape[1]))
        for rest, part in KFold(n_splits=5, shuffle=True, random_state=0).split(levels):
            prior = targets[rest].mean(axis=0)
            tables = [self._table(levels[rest, j], targets[rest], prior) for j in range(levels.shape[1])]
            encoded[part] = self._encode(levels[part], tables, prior)
        return encoded


# Load the data.
train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
sample_submission = pd.read_csv("data/sample_submission.csv")
print(f"train {train.shape}, test {test.shape}")

target_values = train[TARGET].to_numpy(dtype=float)
y = target_values

# Read as numbers or booleans, these columns are labels: strings of whole numbers (True is "1").
for column in ["user_id", "outdoor"]:
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
high_card_columns = ["venue", "user_id"]
text_columns = ["title", "notes"]
# Missing text is empty text (a vectoriser takes no NaN).
train[text_columns] = train[text_columns].fillna("")
test[text_columns] = test[text_columns].fillna("")
X = train[numeric_columns + categorical_columns + high_card_columns + text_columns]
X_test = test[numeric_columns + categorical_columns + high_card_columns + text_columns]
print(f"features: {len(numeric_columns)} numeric, {len(categorical_columns)} categorical, {len(high_card_columns)} high-cardinality, {len(text_columns)} text")

# Preprocessing is part of the model, so it is fitted on training rows only.
preprocess = ColumnTransformer([
    ("numeric", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric_columns),
    ("categorical", make_pipeline(SimpleImputer(strategy="most_frequent"), OneHotEncoder(handle_unknown="ignore")), categorical_columns),
    ("high_cardinality", make_pipeline(TargetMeanEncoder(per_class=False), StandardScaler()), high_card_columns),
    ("text_title", make_union(TfidfVectorizer(ngram_range=(1, 2), max_features=20000, sublinear_tf=True), TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), max_features=20000, sublinear_tf=True)), "title"),
    ("text_notes", make_union(TfidfVectorizer(ngram_range=(1, 2), max_features=20000, sublinear_tf=True), TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), max_features=20000, sublinear_tf=True)), "notes"),
])

# The model: preprocessing followed by the estimator.
estimator = TransformedTargetRegressor(regressor=XGBRegressor(n_estimators=400, learning_rate=0.1, max_depth=6, subsample=0.8, tree_method="hist", n_jobs=N_JOBS, random_state=0), transformer=StandardScaler(with_std=False))
model = make_pipeline(preprocess, estimator)

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
