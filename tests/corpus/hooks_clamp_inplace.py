# ruff: noqa
# Hooks that clamp the gradient in place (g.clamp_) on a leaf and on an intermediate, a hook that returns None, and retain_grad together.
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
w.register_hook(lambda g: g.clamp_(-1.0, 1.0))
h = w * 5
h.retain_grad()
h.register_hook(lambda g: print("h grad seen:", g))
h2 = h.exp()
h2.register_hook(lambda g: g * 0.1)
loss = h2.sum()
loss.backward()
print(w.grad, h.grad)
