# ruff: noqa
# Assigning .grad by hand: a wrong shape or dtype is refused and nothing changes; a right one is used by the optimizer.
import torch
w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
try:
    w.grad = torch.zeros(3)
except RuntimeError as e:
    print("shape:", str(e)[:40])
try:
    w.grad = torch.zeros(2, dtype=torch.float64)
except RuntimeError as e:
    print("dtype:", str(e)[:40])
print(w.grad)
w.grad = torch.tensor([0.5, -0.5])
opt = torch.optim.SGD([w], lr=1.0)
opt.step()
print(w, w.grad)
y = w * 2
try:
    y.requires_grad = False
except RuntimeError as e:
    print("flag:", str(e)[:45])
z = y.detach()
z.requires_grad = True
print(z.is_leaf, z.requires_grad, y.requires_grad)
