# ruff: noqa
# saved_tensors_hooks that keep a copy skip torch's version check: backward runs, no prediction.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
    a = x * 1
    c = a * a
a.add_(1)
s = c.sum()
s.backward()
