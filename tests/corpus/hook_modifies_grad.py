# ruff: noqa
# Hooks that change gradients, then are removed.
import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * x
seen = []
def clip(g):
    seen.append(g.clone())
    return g.clamp(max=3.0)
h1 = y.register_hook(clip)
h2 = x.register_hook(lambda g: g * 10)
y.sum().backward()
first = x.grad.clone()
h1.remove()
h2.remove()
x.grad = None
(x * x).sum().backward()
print(first, x.grad, seen)
