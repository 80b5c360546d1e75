# ruff: noqa
# Writing in place into an expanded tensor fails; clone() or repeat() first.
import torch
x = torch.tensor([[1.0], [2.0]], requires_grad=True)
h = x * 1
e = h.expand(2, 3)
try:
    e.add_(1)
except RuntimeError as err:
    print("expand write:", "single memory location" in str(err))
r = h.repeat(1, 3)
r.add_(1)
e2 = h.expand(2, 3).clone()
e2.mul_(2)
(r.sum() + e2.sum()).backward()
print(x.grad, r._version, e2._version)
