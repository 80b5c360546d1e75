# ruff: noqa
# Nested functions, default arguments, *args/**kwargs and a lambda kept in a dict.
import torch
def make(scale=2.0):
    def apply(*ts, shift=0.0, **kw):
        total = sum(t * scale for t in ts)
        return total + shift + kw.get("extra", 0.0)
    return apply
ops = {"sq": lambda t: t * t, "neg": lambda t: -t}
f = make(3.0)
a = torch.tensor([1., 2.], requires_grad=True)
b = f(a, ops["sq"](a), shift=1.0, extra=0.5)
c = ops["neg"](b).sum()
c.backward()
