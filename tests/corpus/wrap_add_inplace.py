# ruff: noqa
# A learner's wrapper around Tensor.add_ runs once per call.
import torch
count = [0]
orig = torch.Tensor.add_
def add_(self, *a, **k):
    count[0] += 1
    return orig(self, *a, **k)
torch.Tensor.add_ = add_
try:
    x = torch.tensor([1., 2.])
    x.add_(1)
    x.add_(x)
    print(count[0], x)
finally:
    torch.Tensor.add_ = orig
