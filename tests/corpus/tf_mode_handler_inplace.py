# ruff: noqa
# A learner's TorchFunctionMode whose handler has several statements, one an in-place op of its own on
# the result of the in-place call it was handed: each step shows the values and versions as they are.
import torch
from torch.overrides import TorchFunctionMode
class Clamp(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.calls = 0
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.calls += 1
        out = func(*args, **kwargs)
        if getattr(func, "__name__", "") in ("add_", "mul_"):
            out.clamp_(max=6.)
        return out
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
with Clamp() as m:
    y.add_(1)
    y.mul_(2)
z = (y * y).sum()
z.backward()
print(m.calls, y, x.grad)
