# ruff: noqa
# cumprod over a sequence that holds a zero: is the gradient before the zero still right?
import torch
x = torch.tensor([2.0, 0.0, 3.0, 4.0], requires_grad=True)
c = torch.cumprod(x, dim=0)
print(c)
c.sum().backward()
print(x.grad)
manual = []
for i in range(4):
    g = 0.0
    for j in range(i, 4):
        p = 1.0
        for k in range(j + 1):
            if k != i:
                p *= x[k].item()
        g += p
    manual.append(g)
print(manual)
