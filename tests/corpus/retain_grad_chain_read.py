# ruff: noqa
# retain_grad on several non-leaves; reading their .grad after backward, and after a second backward.
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
a = x * 3
b = a.sin()
c = b * a
a.retain_grad()
b.retain_grad()
c.retain_grad()
loss = c.sum()
loss.backward(retain_graph=True)
print(c.grad, b.grad, a.grad, x.grad)
loss.backward()
print(c.grad, b.grad, a.grad, x.grad)
