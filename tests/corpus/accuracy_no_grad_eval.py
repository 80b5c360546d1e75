# ruff: noqa
# Computing accuracy under torch.no_grad with argmax; the accuracy tensor has no grad_fn.
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
X = torch.randn(20, 2)
y = (X[:, 0] > 0).long()
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(3):
    model.train()
    logits = model(X)
    loss = nn.functional.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        preds = model(X).argmax(dim=1)
        acc = (preds == y).float().mean()
    print(epoch, round(loss.item(), 4), acc.item(), acc.requires_grad)
