# ruff: noqa
# The learner works out d/dx sin(x^2) * e^x by hand and checks it against autograd.
import torch
import math
x = torch.tensor(0.7, requires_grad=True)
u = x ** 2
s = torch.sin(u)
e = torch.exp(x)
f = s * e
f.backward()
xv = 0.7
by_hand = math.cos(xv ** 2) * 2 * xv * math.exp(xv) + math.sin(xv ** 2) * math.exp(xv)
print(x.grad.item(), by_hand, abs(x.grad.item() - by_hand) < 1e-5)
