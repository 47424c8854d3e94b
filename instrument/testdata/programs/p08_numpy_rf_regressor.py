import numpy as np
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import mean_squared_error


def rmse(a, b):
    return float(np.sqrt(mean_squared_error(a, b)))


X = np.load("data/train_x.npy")
y = np.load("data/train_y.npy")
X_test = np.load("data/test_x.npy")
cut = int(0.8 * len(X))
X_tr, y_tr, X_val, y_val = X[:cut], y[:cut], X[cut:], y[cut:]

reg = RandomForestRegressor(n_estimators=25, random_state=0)
reg.fit(X_tr, y_tr)
print("train rmse", rmse(y_tr, reg.predict(X_tr)))
val_rmse = rmse(y_val, reg.predict(X_val))
print("val rmse", val_rmse)
pred = reg.predict(X_test)
np.savetxt("submission.csv", np.c_[np.arange(1000, 1000 + len(pred)), pred],
           delimiter=",", header="id,target", comments="", fmt=["%d", "%.5f"])
