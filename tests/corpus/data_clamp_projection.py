# ruff: noqa
# Projected gradient descent with .data tricks: w.data.clamp_(min=0) after each step, then w.data.copy_ to reset.
import torch
torch.manual_seed(0)
target = torch.tensor([1.0, -2.0, 0.5])
w = torch.zeros(3, requires_grad=True)
for step in range(3):
    loss = ((w - target) ** 2).sum()
    loss.backward()
    w.data -= 0.4 * w.grad.data
    w.data.clamp_(min=0)
    w.grad.data.zero_()
    print(step, w, w._version, loss.item())
init = w.data
w.data.copy_(torch.tensor([9.0, 9.0, 9.0]))
print(init, w)
y = w * 2
w.data.mul_(0.5)
y.sum().backward()
print(y, w, w.grad)
