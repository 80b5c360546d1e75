# ruff: noqa
# detach() shares memory, clone() copies and keeps the graph, detach().clone() copies without it, torch.tensor(t) warns.
import torch
import warnings
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a * 2
d = b.detach()
c = b.clone()
dc = b.detach().clone()
print(d.requires_grad, c.requires_grad, c.grad_fn.name(), dc.requires_grad)
d[0] = 100.0
print(b, dc)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    t = torch.tensor(b)
    print(len(w), t.requires_grad)
c.sum().backward()
print(a.grad)
e = a.data
e.mul_(10)
print(a, a._version, e.requires_grad)
