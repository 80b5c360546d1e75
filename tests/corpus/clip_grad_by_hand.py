# ruff: noqa
# Clipping by hand: the total norm of all grads, then p.grad.mul_(scale) and p.grad.data.clamp_; compared with clip_grad_norm_.
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
x = torch.randn(4, 3) * 10
loss = model(x).pow(2).mean()
loss.backward()
grads = [p.grad for p in model.parameters()]
total_norm = torch.norm(torch.stack([g.norm(2) for g in grads]), 2)
max_norm = 1.0
clip_coef = max_norm / (total_norm + 1e-6)
print("norm before", total_norm.item(), "coef", clip_coef.item())
saved = [g.clone() for g in grads]
if clip_coef < 1:
    for g in grads:
        g.mul_(clip_coef)
print("norm after", torch.norm(torch.stack([g.norm() for g in grads])).item())
for p, g in zip(model.parameters(), saved):
    p.grad = g.clone()
returned = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
print("clip_grad_norm_ returned", returned.item())
print([torch.allclose(a, p.grad) for a, p in zip(grads, model.parameters())])
for p in model.parameters():
    p.grad.data.clamp_(-0.1, 0.1)
print(model.weight.grad, model.bias.grad)
