# ruff: noqa
# A training loop that skips bad batches: a NaN check raising ValueError, caught with continue, and a finally that counts batches.
import math
import torch
torch.manual_seed(0)
w = torch.ones(2, requires_grad=True)
batches = [torch.tensor([1.0, 2.0]), torch.tensor([float("nan"), 1.0]), torch.tensor([0.5, -1.0])]
seen = 0
skipped = []
for i, xb in enumerate(batches):
    try:
        loss = (w * xb).sum() ** 2
        if math.isnan(loss.item()):
            raise ValueError(f"nan loss at batch {i}")
        loss.backward()
    except ValueError as err:
        skipped.append(str(err))
        continue
    finally:
        seen += 1
    with torch.no_grad():
        w -= 0.01 * w.grad
        w.grad.zero_()
print(seen, skipped, w)
