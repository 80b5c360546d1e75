# ruff: noqa
# A DataLoader over a TensorDataset, shuffled, feeding a training loop.
import torch
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
X = torch.randn(8, 2)
Y = X.sum(1, keepdim=True)
loader = DataLoader(TensorDataset(X, Y), batch_size=4, shuffle=True)
lin = torch.nn.Linear(2, 1)
opt = torch.optim.Adam(lin.parameters(), lr=0.1)
for xb, yb in loader:
    loss = torch.nn.functional.mse_loss(lin(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(lin.weight)
