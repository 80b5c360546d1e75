# ruff: noqa
# A learner's TorchFunctionMode around plain (not in-place) statements and under no_grad.
import torch
from torch.overrides import TorchFunctionMode
seen = []
class Log(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        seen.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))
x = torch.tensor([1., 2.], requires_grad=True)
with Log():
    y = x * 2
    z = y.exp().sum()
with Log():
    with torch.no_grad():
        q = x * 3
print(seen)
