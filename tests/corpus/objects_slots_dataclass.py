# ruff: noqa
# Tensors kept in a __slots__ class and in a dataclass; a slot left unset; the dataclass rebinds a field, a slot is changed in place.
from dataclasses import dataclass, field

import torch


class Pair:
    __slots__ = ("a", "b", "note")

    def __init__(self, a):
        self.a = a


@dataclass
class State:
    w: torch.Tensor
    history: list = field(default_factory=list)
    step: int = 0


w = torch.tensor([1.0, -2.0], requires_grad=True)
s = State(w)
pair = Pair(torch.tensor([3.0, 4.0], requires_grad=True))
out = (s.w * pair.a).sum()
out.backward()
print(w.grad, pair.a.grad)
s.history.append(out.detach())
s.w = s.w.detach() * 2
s.step += 1
pair.b = s.w
with torch.no_grad():
    pair.a.mul_(10)
print(s, pair.a, pair.b)
