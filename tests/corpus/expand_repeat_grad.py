# ruff: noqa
# expand vs repeat: both broadcast, the gradient sums over the copies.
import torch
b = torch.tensor([1., 2.], requires_grad=True)
e = b.expand(3, 2)
r = b.repeat(3, 1)
u = b.unsqueeze(0) + torch.zeros(3, 1)
loss = (e * torch.arange(6.).view(3, 2)).sum() + r.sum() + u.pow(2).sum()
loss.backward()
print(e.stride(), r.stride(), b.grad)
