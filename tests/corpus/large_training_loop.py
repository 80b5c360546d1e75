# ruff: noqa
# A training loop over layers of more than 16 weights each, with momentum SGD and clipping.
import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(5, 6)
y = torch.randn(5, 3)
for step in range(3):
    opt.zero_grad()
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    nn.utils.clip_grad_norm_(net.parameters(), 0.5)
    opt.step()
print(loss)
