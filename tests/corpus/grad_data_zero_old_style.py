# ruff: noqa
# Old tutorial style: zeroing gradients with w.grad.data.zero_() and updating with w.data -= lr * grad.
import torch
w = torch.tensor([2.0, -1.0], requires_grad=True)
x = torch.tensor([1.0, 3.0])
for step in range(3):
    loss = (w * x).sum() ** 2
    loss.backward()
    print(step, loss.item(), w.grad)
    w.data -= 0.01 * w.grad.data
    w.grad.data.zero_()
print(w, w._version)
