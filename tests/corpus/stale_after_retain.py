# ruff: noqa
# A retained graph works once, then an in-place change makes its second use fail.
import torch
x = torch.tensor([0.5, 1.5], requires_grad=True)
h = x * 2
y = (h ** 2).sum()
y.backward(retain_graph=True)
h.add_(1)
try:
    y.backward()
except RuntimeError as e:
    msg = "inplace" in str(e)
print(x.grad, msg)
