# ruff: noqa
# A tuple of the learner's objects whose attributes change after the tuple is made, and objects nested four deep (only three levels are named).
import torch


class Cell:
    def __init__(self):
        self.value = None
        self.inner = None


cells = (Cell(), Cell())
cells[0].value = torch.tensor([1.0, 2.0], requires_grad=True)
cells[1].value = cells[0].value * 3
deep = Cell()
deep.inner = Cell()
deep.inner.inner = Cell()
deep.inner.inner.value = torch.tensor(5.0, requires_grad=True)
deep.inner.inner.inner = Cell()
deep.inner.inner.inner.value = torch.tensor(7.0)
total = cells[1].value.sum() * deep.inner.inner.value
total.backward()
print(cells[0].value.grad, deep.inner.inner.value.grad)
cells[0].value = None
print(total)
