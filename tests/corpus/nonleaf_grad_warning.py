# ruff: noqa
# Asking for .grad of a non-leaf gives None (and a warning); retain_grad() keeps it, on the next backward.
import torch
import warnings
a = torch.tensor([2.0, 3.0], requires_grad=True)
b = a * a
c = b.sum()
c.backward(retain_graph=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(b.grad)
print(len(caught) > 0, b.is_leaf, b.retains_grad)
b.retain_grad()
c.backward()
print(b.grad, a.grad, b.retains_grad)
d = a.detach().requires_grad_()
e = (d * b.detach()).sum()
e.backward()
print(d.grad, d.is_leaf)
