# ruff: noqa
# Gradient descent in a while loop that stops at a tolerance and skips odd steps.
import torch
x = torch.tensor(3.0, requires_grad=True)
step = 0
while True:
    step += 1
    if step % 2 == 1:
        continue
    loss = (x - 1) ** 2
    loss.backward()
    with torch.no_grad():
        x -= 0.3 * x.grad
    x.grad.zero_()
    if loss < 1e-2 or step > 20:
        break
print(step, x, loss)
