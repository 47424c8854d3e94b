import pandas as pd
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x):
        return self.layers(x)


df = pd.read_csv("data/train.csv")
X = torch.tensor(df[["age", "income"]].values, dtype=torch.float32)
y = torch.tensor(df["target"].values, dtype=torch.float32).unsqueeze(1)
net = Net()
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
loss_fn = nn.BCEWithLogitsLoss()
for epoch in range(5):
    opt.zero_grad()
    loss = loss_fn(net(X), y)
    loss.backward()
    opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
