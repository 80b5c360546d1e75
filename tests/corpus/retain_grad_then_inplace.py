# ruff: noqa
# retain_grad() on an intermediate that is then changed in place: the gradient kept is the one for the tensor's latest version.
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 3
h.retain_grad()
h.mul_(2)
out = (h ** 2).sum()
out.backward()
print(h, h.grad, x.grad)
h2 = x + 0
h2.retain_grad()
u = h2 * h2
h2.add_(5)
try:
    u.sum().backward()
except RuntimeError:
    print("stale:", h2._version, h2.grad)
