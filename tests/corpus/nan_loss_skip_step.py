# ruff: noqa
# Guarding a training step: skip the update when the loss or gradient is not finite.
import torch
w = torch.tensor([1.0, -1.0], requires_grad=True)
data = [torch.tensor([1.0, 2.0]), torch.tensor([0.0, 0.0]), torch.tensor([2.0, 1.0])]
for x in data:
    loss = torch.log((w * x).sum().abs())
    w.grad = None
    loss.backward()
    if not torch.isfinite(loss) or not torch.isfinite(w.grad).all():
        print("skipped", loss.item(), w.grad)
        continue
    with torch.no_grad():
        w -= 0.1 * w.grad
    print("stepped", loss.item(), w)
