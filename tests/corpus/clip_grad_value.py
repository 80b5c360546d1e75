# ruff: noqa
# clip_grad_value_ clips each gradient entry in place; clip_grad_norm_ rescales them all.
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
x = torch.randn(5, 3) * 10
loss = model(x).pow(2).sum()
loss.backward()
before = model.weight.grad.clone()
nn.utils.clip_grad_value_(model.parameters(), clip_value=1.0)
after = model.weight.grad
print(before.abs().max().item(), after.abs().max().item())
print("same .grad object was clipped in place:", after is model.weight.grad)
model.zero_grad()
model(x).pow(2).sum().backward()
total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
print(total.item(), torch.cat([p.grad.flatten() for p in model.parameters()]).norm().item())
