# ruff: noqa
# Tensors inside a namedtuple and a __slots__ class; _replace rebinds, an in-place op mutates.
from collections import namedtuple
import torch
Params = namedtuple("Params", ["w", "b"])
class State:
    __slots__ = ("h", "count")
    def __init__(self, h):
        self.h = h
        self.count = 0
p = Params(torch.tensor([2.0], requires_grad=True), torch.tensor([0.5], requires_grad=True))
s = State(torch.zeros(1))
for t in [1.0, 2.0]:
    s.h = s.h * p.w + p.b * t
    s.count += 1
s.h.sum().backward()
print(s.h, s.count, p.w.grad, p.b.grad)
p2 = p._replace(b=p.b.detach() + 1)
with torch.no_grad():
    p.w.mul_(3)
print(p2.b, p.w, p2.w is p.w)
