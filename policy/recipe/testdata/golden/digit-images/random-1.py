# plan: read.loader=semicolon;read.rows=all;features.columns=typed;features.missing=none;features.image=rgb_scaled;features.scaling=none;model.family=svm_rbf;svm.C=1;validation=none;ensemble=none
"""Solution for task digit-images (metric: accuracy, higher is better).

Read the CSV files with ';' as the separator and train on all training rows. Use the
numeric columns (leaving missing values as they are) and read images as RGB pixels in
[0, 1]. Train a RBF-kernel SVM model (C 1). Skip validation and write submission.csv.

Plan key: read.loader=semicolon; read.rows=all; features.columns=typed; features.missing=none;
features.image=rgb_scaled; features.scaling=none; model.family=svm_rbf; svm.C=1;
validation=none; ensemble=none
"""
import os
import time

# The threads this program may use (the runner sets OMP_NUM_THREADS to its share
# of the cores); more threads than cores make OpenMP threads wait on each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")
N_JOBS = int(os.environ["OMP_NUM_THREADS"])

import numpy as np
import pandas as pd
from PIL import Image
from sklearn.compose import ColumnTransformer
from sklearn.metrics import accuracy_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, LabelEncoder
from sklearn.svm import SVC

ID_COLUMN = "image_id"
TARGET = "digit"
started = time.time()

def load_images(paths):
    """Reads image files into one row of pixels each (three colour channels, scaled to [0, 1])."""
    rows = [np.asarray(Image.open(path).convert("RGB"), dtype=np.float32).ravel() / 255.0 for path in np.ravel(paths)]
    return np.stack(rows)


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

# Image paths are relative to the data folder.
train["image_path"] = "data/" + train["image"].astype(str)
test["image_path"] = "data/" + test["image"].astype(str)
numeric_columns = [c for c in train.columns if c not in [ID_COLUMN, TARGET] and pd.api.types.is_numeric_dtype(train[c])]
X = train[numeric_columns + ["image_path"]]
X_test = test[numeric_columns + ["image_path"]]
print(f"features: {len(numeric_columns)} numeric, images")

# Preprocessing is part of the model, so it is fitted on training rows only.
preprocess = ColumnTransformer([
    ("numeric", FunctionTransformer(), numeric_columns),
    ("image", FunctionTransformer(load_images), "image_path"),
])

# The model: preprocessing followed by the estimator.
estimator = SVC(C=1)
model = make_pipeline(preprocess, estimator)

# Fit on every training row.
fit_started = time.time()
model.fit(X, y)
print(f"fitted on {len(X)} rows in {time.time() - fit_started:.1f}s")

# Score on rows the model has seen: optimistic, but shows whether it learned anything.
seen = np.random.RandomState(0).permutation(len(X))[:2000]
X_train_sample, y_train_sample = X.iloc[seen], y[seen]
train_sample_pred = model.predict(X_train_sample)
train_score = accuracy_score(y_train_sample, train_sample_pred)
print(f"training accuracy: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
test_pred = model.predict(X_test)
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
submission[sample_submission.columns[1]] = label_encoder.inverse_transform(test_pred)
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
