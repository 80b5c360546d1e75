# ruff: noqa
# Global settings learners change: torch.set_default_dtype(torch.float64) for a gradient check, set_printoptions(precision=2), then back.
import torch
torch.set_printoptions(precision=2)
torch.set_default_dtype(torch.float64)
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x.exp() * x).sum()
y.backward()
print(x.dtype, x.grad, torch.autograd.gradcheck(lambda t: (t.exp() * t).sum(), (x,)))
layer = torch.nn.Linear(2, 1)
print(layer.weight.dtype)
torch.set_default_dtype(torch.float32)
z = torch.tensor([0.1, 0.2])
print(z.dtype, z + x.detach())
torch.set_printoptions(profile="default")
print(torch.tensor([1 / 3]))
