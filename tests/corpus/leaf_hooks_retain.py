# ruff: noqa
# Hooks on a leaf and on an intermediate, and retain_grad.
import torch
x = torch.tensor([1., -2., 3.], requires_grad=True)
seen = []
x.register_hook(lambda g: seen.append(g.clone()))
y = x.exp()
y.retain_grad()
y.register_hook(lambda g: g.clamp(max=0.5))
z = (y * x).sum()
z.backward()
print(seen[0], y.grad, x.grad)
