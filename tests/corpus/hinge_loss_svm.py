# ruff: noqa
# A linear SVM with hinge loss: only margin violators contribute to the gradient.
import torch
torch.manual_seed(0)
X = torch.tensor([[2.0, 1.0], [1.0, 3.0], [-1.0, -2.0], [-2.0, 0.5]])
y = torch.tensor([1.0, 1.0, -1.0, -1.0])
w = torch.zeros(2, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for it in range(4):
    margins = y * (X @ w + b)
    loss = torch.clamp(1 - margins, min=0).mean() + 0.01 * (w ** 2).sum()
    w.grad = None
    b.grad = None
    loss.backward()
    active = (margins < 1).sum().item()
    with torch.no_grad():
        w.sub_(0.5 * w.grad)
        b.sub_(0.5 * b.grad)
    print(it, round(loss.item(), 4), active)
