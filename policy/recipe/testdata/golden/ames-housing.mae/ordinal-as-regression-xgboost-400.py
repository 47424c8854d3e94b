# plan: read.loader=default;read.rows=all;features.columns=typed;features.missing=median;features.categorical=ordinal;features.scaling=standard;target.transform=none;model.family=xgboost;xgb.n_estimators=400;xgb.learning_rate=0.1;xgb.max_depth=6;xgb.subsample=0.8;validation=none;ensemble=none
"""Solution for task ames-housing (metric: mae, lower is better).

Read the CSV files with pandas' default settings and train on all training rows. Use the
numeric columns (imputing missing values with the median), encode categorical columns as
integers and standardise the features. Train an XGBoost model (n estimators 400,
learning rate 0.1, max depth 6, subsample 0.8). Skip validation and write
submission.csv.

Plan key: read.loader=default; read.rows=all; features.columns=typed; features.missing=median;
features.categorical=ordinal; features.scaling=standard; target.transform=none;
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
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.impute import SimpleImputer
from sklearn.metrics import mean_absolute_error
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
y = target_values

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
train_score = mean_absolute_error(y_train_sample, train_sample_pred)
print(f"training mae: {train_score:.5f}")

# Predict the test rows and write the submission in the sample's format.
test_pred = model.predict(X_test)
submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})
submission[sample_submission.columns[1]] = test_pred
submission.to_csv("submission.csv", index=False)
print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")
