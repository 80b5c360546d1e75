# ruff: noqa
# Integer and boolean tensors beside float ones: argmax, masks, counts, floor division.
import torch
scores = torch.tensor([[0.1, 2.0, -1.0], [3.0, 0.5, 0.2]], requires_grad=True)
pred = scores.argmax(dim=1)
labels = torch.tensor([1, 1])
correct = pred == labels
acc = correct.float().mean()
n = correct.sum()
half = torch.arange(7) // 2
mask = scores > 0.3
picked = scores[mask]
picked.sum().backward()
flags = mask.any(dim=1) & ~mask.all(dim=1)
print(pred, correct, acc, n.item(), half, scores.grad, flags, pred.dtype)
