# ruff: noqa
# A learner's own context managers: a class and a contextmanager generator.
import contextlib
import torch
class Frozen:
    def __init__(self, *ts):
        self.ts = ts
    def __enter__(self):
        for t in self.ts:
            t.requires_grad_(False)
        return self
    def __exit__(self, *exc):
        for t in self.ts:
            t.requires_grad_(True)
        return False
@contextlib.contextmanager
def scaled(t, k):
    with torch.no_grad():
        t.mul_(k)
    try:
        yield t
    finally:
        with torch.no_grad():
            t.div_(k)
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.], requires_grad=True)
with Frozen(a):
    y = (a * b).sum()
with scaled(b, 2.0) as bb:
    z = (a * bb).sum()
(y + z).backward()
print(a.grad, b.grad, b)
