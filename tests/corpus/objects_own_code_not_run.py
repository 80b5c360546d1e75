# ruff: noqa
# Objects whose attribute access runs code: a property that prints and counts, __getattr__ that prints, and a class holding itself. Tracing must not run that code more than the program does.
import torch

calls = []


class Watched:
    def __init__(self):
        self.t = torch.ones(2, requires_grad=True)
        self.me = self

    @property
    def doubled(self):
        calls.append("doubled")
        print("property read")
        return self.t * 2

    def __getattr__(self, name):
        calls.append(name)
        print("getattr", name)
        raise AttributeError(name)


box = Watched()
y = box.doubled.sum()
y.backward()
print(box.t.grad, calls)
print(hasattr(box, "missing"), calls)
