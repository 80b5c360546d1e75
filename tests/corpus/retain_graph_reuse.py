# ruff: noqa
# retain_graph: one graph used twice accumulates, and a third time fails once freed.
import torch
w = torch.tensor([2., 3.], requires_grad=True)
y = (w * w).sum()
y.backward(retain_graph=True)
first = w.grad.clone()
y.backward()
try:
    y.backward()
except RuntimeError as e:
    msg = str(e)[:40]
print(first, w.grad, msg)
