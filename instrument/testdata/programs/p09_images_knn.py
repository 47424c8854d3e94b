import os
import numpy as np
import pandas as pd
from PIL import Image
from sklearn.neighbors import KNeighborsClassifier

IMG_DIR = "data/images"
labels = pd.read_csv("data/train_images.csv")
test_ids = pd.read_csv("data/test_images.csv")["image"].tolist()

X = []
for name in labels["image"]:
    with Image.open(os.path.join(IMG_DIR, name + ".png")) as im:
        X.append(np.asarray(im.convert("L"), dtype=np.float32).ravel() / 255.0)
X = np.stack(X)
X_test = np.stack([np.asarray(Image.open(os.path.join(IMG_DIR, n + ".png")).convert("L"),
                              dtype=np.float32).ravel() / 255.0 for n in test_ids])

knn = KNeighborsClassifier(n_neighbors=3)
knn.fit(X, labels["label"])
print("train accuracy", knn.score(X, labels["label"]))
pred = knn.predict(X_test)
pd.DataFrame({"image": test_ids, "label": pred}).to_csv("submission.csv", index=False)
