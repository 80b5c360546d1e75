# ruff: noqa
# The classic manual SGD step through .data: the trace shows each new w.
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
x = torch.tensor([1., 2., 3.])
lr = 0.1
for step in range(3):
    loss = ((w * x).sum() - 1) ** 2
    loss.backward()
    w.data = w.data - lr * w.grad.data
    w.grad.zero_()
print(w)
