# ruff: noqa
# Two TorchDispatchModes, one inside the other: the inner one runs each in-place add twice, the outer
# one logs what reaches it; every step inside either handler shows the values as the kernels left them.
import torch
from torch.utils._python_dispatch import TorchDispatchMode
class Log(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.seen = []
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(func.__name__)
        out = func(*args, **(kwargs or {}))
        return out
class Twice(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func is torch.ops.aten.add_.Tensor:
            out = func(*args, **kwargs)
        return out
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 3
with Log() as log, Twice():
    y.add_(1)
    w = y * y
w.sum().backward()
print(log.seen, y, w, x.grad)
