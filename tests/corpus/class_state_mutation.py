# ruff: noqa
# A class keeps tensors as attributes and changes them in its methods.
import torch
class Running:
    def __init__(self):
        self.mean = torch.zeros(2)
        self.count = 0
        self.w = torch.ones(2, requires_grad=True)
    def update(self, x):
        self.count += 1
        self.mean.add_((x - self.mean) / self.count)
        return (self.w * x).sum()
r = Running()
for x in (torch.tensor([1., 2.]), torch.tensor([3., 4.])):
    out = r.update(x)
    out.backward()
print(r.mean, r.w.grad)
