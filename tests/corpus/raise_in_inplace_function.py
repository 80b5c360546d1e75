# ruff: noqa
# A function changes a tensor in place, then raises; the caller handles it and carries on.
import torch
def risky(t, k):
    t.mul_(k)
    if k > 2:
        raise ValueError("too big")
    return t
x = torch.tensor([1., 2.])
for k in (2, 3):
    try:
        y = risky(x, k)
    except ValueError as e:
        msg = str(e)
        x.sub_(1)
print(x, msg)
