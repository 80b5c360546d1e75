# ruff: noqa
# A learner's TorchFunctionMode around module calls sees exactly the calls its code makes
# (the tracer's module hooks read each input's and output's version and grad_fn: not through the mode).
import torch
from torch.overrides import TorchFunctionMode
seen = []
class Log(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        seen.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Sigmoid(), torch.nn.Identity(), torch.nn.Linear(4, 1))
x = torch.randn(5, 3, requires_grad=True)
with Log():
    y = model(x * 2).sum()
    y.backward()
print(len(seen), seen)
