# ruff: noqa
# A bias of shape (3,) broadcast over a batch: its .grad is summed over the batch dimension.
import torch
torch.manual_seed(0)
X = torch.randn(4, 3)
b = torch.zeros(3, requires_grad=True)
s = torch.ones(4, 1, requires_grad=True)
out = X * s + b
out.sum().backward()
print(b.grad, b.grad.shape)
print(s.grad.shape, torch.allclose(s.grad.squeeze(1), X.sum(dim=1)))
