# ruff: noqa
# An in-place product on a view made under the program's own torch function mode, then c
# changed: backward fails on the c the hidden MulBackward0 saved. The mode sees exactly the
# program's calls.
import torch
from torch.overrides import TorchFunctionMode


class CountCalls(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(getattr(func, "__name__", "?"))
        return func(*args, **(kwargs or {}))


torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
c = torch.randn(6)
b = w * 2
a = b.reshape(-1)
calls = CountCalls()
with calls:
    a.mul_(c)
print(calls.names)
c.add_(1)
try:
    a.backward(gradient=torch.ones_like(a))
except RuntimeError as e:
    print("inplace" in str(e))
