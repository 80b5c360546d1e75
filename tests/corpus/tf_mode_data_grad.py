# ruff: noqa
# A learner's TorchFunctionMode around .data writes, .grad assignment and detach_.
import torch
from torch.overrides import TorchFunctionMode
seen = []
class Log(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", str(func))
        if name not in ("__get__",):
            seen.append(name)
        return func(*args, **(kwargs or {}))
w = torch.tensor([1., 2.], requires_grad=True)
with Log():
    w.data = w.data * 2
    w.grad = torch.ones(2)
    v = w * 1
    v.detach_()
    v += 1
print(seen, w, w.grad, v)
