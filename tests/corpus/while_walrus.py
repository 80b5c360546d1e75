# ruff: noqa
# while with break/continue, the walrus operator and a conditional expression.
import torch
x = torch.tensor(1.5, requires_grad=True)
y = x
n = 0
while True:
    n += 1
    if n % 2 == 0:
        continue
    y = y * 1.5 if n < 5 else y + 1
    if (big := y.detach().item()) > 4:
        break
y.backward()
assert x.grad is not None
