# ruff: noqa
# A closure that keeps a running tensor total with nonlocal.
import torch
def make_meter():
    total = torch.zeros(())
    count = 0
    def update(v):
        nonlocal total, count
        total = total + v.detach()
        count += 1
        return total / count
    return update
meter = make_meter()
w = torch.tensor(2.0, requires_grad=True)
for step in range(3):
    loss = (w - step) ** 2
    avg = meter(loss)
    loss.backward()
print(avg, w.grad)
