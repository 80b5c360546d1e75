# ruff: noqa
# The "optimizer step inside backward" recipe: one optimizer per parameter, stepped from register_post_accumulate_grad_hook, grads freed right away.
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
opts = {p: torch.optim.Adam([p], lr=0.01, foreach=False) for p in model.parameters()}

def step_hook(p):
    opts[p].step()
    opts[p].zero_grad()

for p in model.parameters():
    p.register_post_accumulate_grad_hook(step_hook)
before = model[0].weight.clone()
x = torch.randn(5, 3)
loss = model(x).pow(2).mean()
loss.backward()
print(torch.equal(before, model[0].weight), model[0].weight.grad, loss.item())
loss2 = model(x).pow(2).mean()
loss2.backward()
print(loss2.item() < loss.item())
