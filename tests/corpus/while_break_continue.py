# ruff: noqa
# A gradient-descent loop with while, break and continue, and an in-place step under no_grad.
import torch
x = torch.tensor([3.0], requires_grad=True)
step = 0
while step < 20:
    step += 1
    loss = (x - 1) ** 2
    loss.backward()
    if step % 3 == 0:
        x.grad.zero_(); continue
    with torch.no_grad():
        x -= 0.2 * x.grad
    x.grad.zero_()
    if loss.item() < 0.05:
        break
print(step, x)
