# ruff: noqa
# retain_grad() on every intermediate of a loop, kept in a list.
import torch
x = torch.tensor(0.5, requires_grad=True)
hs = []
h = x
for k in range(4):
    h = torch.tanh(h * 2)
    h.retain_grad()
    hs.append(h)
h.backward()
grads = [t.grad.item() for t in hs]
print(grads, x.grad)
