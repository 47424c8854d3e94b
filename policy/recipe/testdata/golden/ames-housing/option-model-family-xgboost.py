# plan: read.loader=default;read.rows=all;features.columns=typed;features.missing=median;features.categorical=ordinal;features.scaling=standard;target.transform=log1p;model.family=xgboost;xgb.n_estimators=100;xgb.learning_rate=0.03;xgb.max_depth=3;xgb.subsample=1.0;validation=holdout;ensemble=none
"""Solution for task ames-housing (metric: rmsle, lower is better).

Read the CSV files with pandas' default settings and train on all training rows. Use the
numeric columns (imputing missing values with the median), encode categorical columns as
integers and standardise the features. Train an XGBoost model (n estimators 100,
learning rate 0.03, max depth 3, subsample 1.0), on log(1 + target). Print a score on a
20% holdout, then refit on all rows and write submission.csv.

Plan key: read.loader=default; read.rows=all; features.columns=typed; features.missing=median;
features.categorical=ordinal; features.scaling=standard; target.transform=log1p;
model.family=xgboost; xgb.n_estimators=100; xgb.learning_rate=0.03; xgb.max_depth=3;
xgb.subsample=1.0; validation=holdout; ensemble=none
"""
import os
import time

# The threads this program may use (the runner sets OMP_NUM_THREADS to its share
# of the cores); more threads than cores make OpenMP threads wait on each other.
os.environ.setdefault("OMP_NUM_THREADS", "2")
N_JOBS = int(os.environ["OMP_NUM_THREADS"])

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.impute import SimpleImputer
from sklearn.metrics import mean_squared_log_error
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder, StandardScaler
from xgboost import XGBRegressor

ID_COLUMN = "house_id"
TARGET = "Sale_Price"
started = time.time()

# Load the data.
train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/test.csv")
sample_submission = pd.read_csv("data/sample_submission.csv")
print(f"train {train.shape}, test {test.shape}")

target_values = train[TARGET].to_numpy(dtype=float)
# Learn log(1 + target): errors on large values stop dominating, as in the metric.
y = np.log1p(target_values)

numeric_columns = [c for c in train.columns if c not in [ID_COLUMN, TARGET] and pd.api.types.is_numeric_dtype(train[c])]
categorical_columns = ["MS_SubClass", "MS_Zoning", "Street", "Alley", "Lot_Shape", "Land_Contour", "Utilities", "Lot_Config", "Land_Slope", "Neighborhood", "Condition_1", "Condition_2", "Bldg_Type", "House_Style", "Overall_Cond", "Roof_Style", "Roof_Matl", "Exterior_1st", "Exterior_2nd", "Mas_Vnr_Type", "Exter_Cond", "Foundation", "Bsmt_Cond", "Bsmt_Exposure", "BsmtFin_Type_1", "BsmtFin_Type_2", "Heating", "Heating_QC", "Central_Air", "Electrical", "Functional", "Garage_Type", "Garage_Finish", "Garage_Cond", "Paved_Drive", "Pool_QC", "Fence", "Misc_Feature", "Sale_Type", "Sale_Condition"]
X = train[numeric_columns + categorical_columns]
X_test = test[numeric_columns + categorical_columns]
print(f"features: {len(numeric_columns)} numeric, {len(categorical_columns)} categorical")

# Preprocessing is part of the model, so it is fitted on training rows only.
preprocess = ColumnTransformer([
    ("numeric", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric_columns),
    ("categorical", make_pipeline(SimpleImputer(strategy="most_frequent"), OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)), categorical_columns),
])

# The model: preprocessing followed by the estimator.
estimator = TransformedTargetRegressor(regressor=XGBRegressor(n_estimators=100, learning_rate=0.03, max_depth=3, subsample=1.0, tree_method="hist", n_jobs=N_JOBS, random_state=0), transformer=StandardScaler(with_std=False))
model = make_pipeline(preprocess, estimator)

# Hold out a fifth of the training rows to estimate the test score.
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2, random_state=0)
model.fit(X_train, y_train)
valid_pred = model.predict(X_valid)
valid_pred = np.expm1(valid_pred)
valid_pred = np.clip(valid_pred, 0, None)  # the metric takes log(1 + prediction)
valid_score = np.sqrt(mean_squared_log_error(np.expm1(y_valid), valid_pred))
print(f"validation rmsle: {valid_score:.5f}")

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
train_score = np.sqrt(mean_squared_log_error(np.expm1(y_train_sample), train_sample_pred))
print(f"training rmsle: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
test_pred = model.predict(X_test)
test_pred = np.expm1(test_pred)
test_pred = np.clip(test_pred, 0, None)  # the metric takes log(1 + prediction)
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
submission[sample_submission.columns[1]] = test_pred
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
