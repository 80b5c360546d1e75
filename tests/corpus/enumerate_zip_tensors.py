# ruff: noqa
# zip and enumerate over rows of two tensors, building a loss term by term.
import torch
preds = torch.tensor([[0.2, 0.8], [0.6, 0.4], [0.9, 0.1]], requires_grad=True)
labels = torch.tensor([1, 0, 1])
loss = 0.0
for i, (p, lab) in enumerate(zip(preds, labels)):
    term = -torch.log(p[lab])
    loss = loss + term
    print(i, lab.item(), round(term.item(), 4))
loss = loss / len(labels)
loss.backward()
print(preds.grad)
