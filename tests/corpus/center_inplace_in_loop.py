# ruff: noqa
# A helper centres its argument in place; called in a loop after the value was squared, backward breaks.
import torch
w = torch.tensor([1.0, 2.0, 6.0], requires_grad=True)
def center_(t):
    t -= t.mean()
    return t
def center(t):
    return t - t.mean()
for attempt in range(2):
    h = w * 2
    sq = h ** 2
    if attempt == 0:
        center_(h)
    else:
        h = center(h)
    loss = sq.sum() + h.sum()
    try:
        loss.backward()
        print("attempt", attempt, "ok", w.grad)
    except RuntimeError as e:
        print("attempt", attempt, "failed:", str(e)[:40])
