# ruff: noqa
# torch.no_grad inside a loop, with requires_grad_ toggled and detach_.
import torch
w = torch.tensor([1., -1.], requires_grad=True)
total = torch.zeros(2)
for i in range(3):
    y = w * (i + 1)
    with torch.no_grad():
        total += y
        z = y * 2
    if i == 1:
        y.detach_()
r = torch.ones(2)
r.requires_grad_()
q = (r * w).sum()
q.backward()
r.requires_grad_(False)
print(total, z.requires_grad, y.requires_grad, w.grad, r.grad)
