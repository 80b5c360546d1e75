# ruff: noqa
# clamp_ on a non-leaf: the gradient is cut where the clamp bit.
import torch
x = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
y = x * 2
y.clamp_(min=-1.0, max=2.0)
z = y.relu_()
same = z is y
loss = (y * torch.tensor([1., 2., 3.])).sum()
loss.backward()
print(y, same, x.grad)
