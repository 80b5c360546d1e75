# ruff: noqa
# Adam keeps its state in tensors the learner never names.
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
opt = torch.optim.Adam([w], lr=0.01)
for step in range(2):
    opt.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    opt.step()
