# ruff: noqa
# masked_fill_ on an intermediate: the masked positions get zero gradient.
import torch
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
h = x * 2
mask = h > 5
h.masked_fill_(mask, 0.0)
print(h, h._version, h.grad_fn.name())
h.sum().backward()
print(x.grad)
y = x.exp()
y.masked_fill_(y > 10, 10.0)
try:
    y.sum().backward()
except RuntimeError as e:
    print("backward failed:", str(e)[:60])
