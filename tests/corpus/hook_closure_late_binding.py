# ruff: noqa
# Saving gradients of activations with hooks made in a loop: the lambda reads the loop variable late, so every hook writes under the last key; i=i fixes it.
import torch
torch.manual_seed(33)
x = torch.randn(3, requires_grad=True)
acts = []
grads = {}
h = x
for i in range(3):
    h = torch.sin(h) * (i + 1)
    h.register_hook(lambda g: grads.__setitem__(i, g))
    acts.append(h)
h.sum().backward()
print(sorted(grads), grads[2])
grads.clear()
x.grad = None
h = x
for i in range(3):
    h = torch.sin(h) * (i + 1)
    h.register_hook(lambda g, i=i: grads.__setitem__(i, g))
h.sum().backward()
print(sorted(grads), [g.norm().item() for _, g in sorted(grads.items())])
