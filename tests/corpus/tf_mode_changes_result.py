# ruff: noqa
# A learner's TorchFunctionMode that changes results: values traced are those the mode makes.
import torch
from torch.overrides import TorchFunctionMode
class DoubleAdds(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.n = 0
    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", "") in ("add", "__add__", "add_", "__iadd__"):
            self.n += 1
            if isinstance(out, torch.Tensor) and not out.requires_grad:
                out = out * 2
        return out
x = torch.tensor([1., 2.])
mode = DoubleAdds()
with mode:
    y = x + 1
    x += 1
    z = x.add(y)
print(mode.n, x, y, z)
