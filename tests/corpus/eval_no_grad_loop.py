# ruff: noqa
# An evaluation under torch.no_grad() inside the training loop.
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(6, 2)
y = x.sum(1, keepdim=True)
history = []
for epoch in range(3):
    model.train()
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        val = nn.functional.mse_loss(model(x), y)
        history.append(val.item())
print(history)
