# ruff: noqa
# A global step counter and best loss updated inside a function; walrus in a while condition.
import torch
w = torch.tensor(5.0, requires_grad=True)
best = None
steps = 0
def train_step():
    global best, steps
    loss = (w - 2) ** 2
    loss.backward()
    with torch.no_grad():
        w.sub_(0.3 * w.grad)
    w.grad = None
    steps += 1
    if best is None or loss < best:
        best = loss.detach()
    return loss.item()
while (l := train_step()) > 0.01:
    pass
print(steps, best, w, round(l, 6))
