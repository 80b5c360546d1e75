# ruff: noqa
# A learner's __torch_function__ subclass sees exactly the calls its code makes.
import torch
seen = []
class Logged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        seen.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})
a = torch.tensor([1., 2.]).as_subclass(Logged)
b = a * 3
c = b + 1
print(len(seen), seen)
