# ruff: noqa
# An in-place product on a view made under the program's own dispatch mode: it sees exactly the
# ops the program runs (the tracer's stand-in call on meta tensors never reaches it), and the
# value the hidden MulBackward0 saved is still predicted stale once c changes.
import torch
from torch.utils._python_dispatch import TorchDispatchMode


class CountOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
c = torch.randn(6)
b = w * 2
a = b.reshape(-1)
ops = CountOps()
with ops:
    a.mul_(c)
    b[0].sigmoid_()
print(ops.ops)
c.add_(1)
try:
    a.backward(gradient=torch.ones_like(a))
except RuntimeError as e:
    print("inplace" in str(e))
