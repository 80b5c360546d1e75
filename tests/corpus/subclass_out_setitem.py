# ruff: noqa
# A __torch_function__ subclass used with out= and index assignment counts each call once.
import torch
count = {}
class Counted(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        n = getattr(func, "__name__", str(func))
        if n != "__get__":
            count[n] = count.get(n, 0) + 1
        return super().__torch_function__(func, types, args, kwargs or {})
a = torch.tensor([1., 2., 3.]).as_subclass(Counted)
buf = torch.zeros(3).as_subclass(Counted)
torch.add(a, 1, out=buf)
buf[0] = 9.
buf += a
print(sorted(count.items()), buf)
