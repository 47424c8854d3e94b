import warnings
warnings.filterwarnings("ignore")
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

df = pd.read_csv("data/train.csv")
df_test = pd.read_csv("data/test.csv")
num, cat = ["age", "income"], ["city"]
pre = ColumnTransformer([
    ("num", StandardScaler(), num),
    ("cat", OneHotEncoder(handle_unknown="ignore"), cat),
])
pipe = Pipeline([("pre", pre), ("clf", LogisticRegression(max_iter=1000))])
search = GridSearchCV(pipe, {"clf__C": [0.1, 1.0, 10.0]}, cv=3, scoring="roc_auc")
search.fit(df[num + cat], df["target"])
print("best params", search.best_params_, "cv auc", round(search.best_score_, 4))
proba = search.predict_proba(df_test[num + cat])[:, 1]
pd.DataFrame({"id": df_test["id"], "target": proba}).to_csv("submission.csv", index=False)
