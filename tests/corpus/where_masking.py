# ruff: noqa
# torch.where, masked_fill_ and boolean-mask writes on a tensor in the graph.
import torch
x = torch.tensor([-2., -1., 0.5, 3.], requires_grad=True)
y = torch.where(x > 0, x ** 2, -x)
m = x < 0
z = y.clone()
z.masked_fill_(m, 0.)
z[x > 1] = 7.
loss = z.sum() + y.sum()
loss.backward()
print(z, x.grad)
