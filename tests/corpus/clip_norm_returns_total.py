# ruff: noqa
# clip_grad_norm_ returns the norm before clipping; check it by hand, then the inf-norm and clip_grad_value_.
import torch
import torch.nn as nn
torch.manual_seed(4)
model = nn.Linear(4, 2)
x = torch.randn(3, 4) * 10
loss = model(x).pow(2).sum()
loss.backward()
by_hand = torch.sqrt(sum((p.grad ** 2).sum() for p in model.parameters()))
total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
print(f"total={total.item():.3f} by_hand={by_hand.item():.3f}")
after = torch.sqrt(sum((p.grad ** 2).sum() for p in model.parameters()))
print(after.item())
inf = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.1, norm_type=float('inf'))
print(inf, model.bias.grad.abs().max())
nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
print(model.weight.grad)
opt = torch.optim.SGD(model.parameters(), lr=1.0)
opt.step()
print(model.bias)
