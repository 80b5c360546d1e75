# ruff: noqa
# Summing losses for logging: `running += loss` keeps every graph alive, `running += loss.item()` does not.
import torch
w = torch.tensor([1.0, -1.0], requires_grad=True)
data = [torch.tensor([1.0, 2.0]), torch.tensor([2.0, 0.5]), torch.tensor([0.0, 1.0])]
running_t = 0
running_f = 0.0
for x in data:
    loss = (w @ x - 1.0) ** 2
    w.grad = None
    loss.backward()
    running_t += loss
    running_f += loss.item()
print(type(running_t).__name__, running_t.grad_fn.name(), round(running_f, 4))
