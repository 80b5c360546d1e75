# ruff: noqa
# A learner's __torch_function__ subclass sees exactly the calls of in-place statements (which run
# with the recorder's torch function mode: its own reads must not reach the subclass).
import torch
seen = []
class Logged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        seen.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})
a = torch.tensor([1., 2.], requires_grad=True).as_subclass(Logged)
b = a * 2
b.add_(1)
b[0] = 3.
c = b.detach()
c += 1
print(len(seen), seen)
