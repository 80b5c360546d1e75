# ruff: noqa
# BCE written by hand with log(sigmoid(z)) gives -inf and NaN gradients for a confident logit; the builtin does not.
import torch
import torch.nn.functional as F
z = torch.tensor([-120.0, 0.0, 3.0], requires_grad=True)
y = torch.tensor([1.0, 0.0, 1.0])
p = torch.sigmoid(z)
manual = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
manual.backward()
print(manual, z.grad)
z.grad = None
builtin = F.binary_cross_entropy_with_logits(z, y)
builtin.backward()
print(builtin, z.grad)
