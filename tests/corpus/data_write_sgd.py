# ruff: noqa
# The classic manual step with .data and .grad.data, and p.data.copy_.
import torch
w = torch.tensor([1., 2.], requires_grad=True)
for _ in range(3):
    loss = ((w * 3 - 1) ** 2).sum()
    loss.backward()
    w.data = w.data - 0.01 * w.grad.data
    w.grad.data.zero_()
b = torch.tensor([5.], requires_grad=True)
b.data.copy_(torch.tensor([7.]))
b.data.mul_(2)
print(w, b)
