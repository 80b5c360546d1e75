# ruff: noqa
# The walrus operator with tensors in conditions and comprehensions.
import torch
x = torch.tensor([0.5, -2.0, 3.0], requires_grad=True)
if (s := (x ** 2).sum()) > 5:
    s.backward()
big = [v for t in x if (v := t * 2) > 0]
n = 4
while (n := n - 1) > 0:
    x.grad.mul_(0.5)
print(s, big, x.grad)
