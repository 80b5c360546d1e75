# ruff: noqa
# A __torch_function__ subclass sees in-place calls once each, and its values are right.
import torch
seen = []
class Logged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        seen.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})
a = torch.tensor([1., 2.]).as_subclass(Logged)
a.mul_(3)
a[1] = 7.
b = a + 1
b.add_(a)
print(len(seen), seen, b)
