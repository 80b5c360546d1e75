# ruff: noqa
# backward() and in-place updates run inside comprehensions and generator expressions (inlined on Python 3.12+), with retain_graph on a shared trunk.
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
trunk = w.tanh()
heads = [trunk * k for k in (1.0, 2.0, 3.0)]
[h.sum().backward(retain_graph=True) for h in heads]
print(w.grad)
grads = {i: g.clone() for i, g in enumerate([w.grad])}
with torch.no_grad():
    _ = [p.sub_(0.1 * p.grad) for p in (w,)]
print(w, sum(p.grad.sum() for p in (w,)), grads)
total = sum((trunk * k).sum() for k in range(3))
total.backward()
print(w.grad)
