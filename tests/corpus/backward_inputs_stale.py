# ruff: noqa
# backward(inputs=...) that never reaches the stale node runs fine; the plain backward() then fails.
import torch
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.], requires_grad=True)
h = a * 1
c = h * h
k = b * 2
y = c.sum() + k.sum()
h.add_(1)
y.backward(inputs=[b], retain_graph=True)
y.backward()
