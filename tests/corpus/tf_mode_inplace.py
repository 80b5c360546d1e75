# ruff: noqa
# A learner's TorchFunctionMode sees exactly the calls of in-place statements, out= and index writes.
import torch
from torch.overrides import TorchFunctionMode
seen = []
class Log(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        seen.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))
x = torch.tensor([1., 2., 3.])
buf = torch.zeros(3)
with Log():
    x.add_(1)
    x[0] = 5.
    torch.mul(x, 2, out=buf)
    y = x * buf
print(len(seen), seen)
