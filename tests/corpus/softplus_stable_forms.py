# ruff: noqa
# log(1+exp(x)) overflows to inf for big x and its gradient turns NaN; softplus does not.
import torch
import torch.nn.functional as F
x = torch.tensor([-100.0, 0.0, 100.0], requires_grad=True)
naive = torch.log(1 + torch.exp(x))
naive.sum().backward()
print(naive, x.grad)
x.grad = None
stable = F.softplus(x)
stable.sum().backward()
print(stable, x.grad)
x.grad = None
ls = F.logsigmoid(x)
ls.sum().backward()
print(ls, x.grad)
