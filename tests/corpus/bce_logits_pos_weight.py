# ruff: noqa
# Logistic regression with BCEWithLogitsLoss: pos_weight for the rare class, reduction='none' with a mask, vs the formula by hand.
import torch
import torch.nn as nn
torch.manual_seed(1)
X = torch.randn(8, 3)
y = torch.tensor([1., 0., 0., 0., 1., 0., 0., 0.])
model = nn.Linear(3, 1)
logits = model(X).squeeze(1)
crit = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0]))
loss = crit(logits, y)
by_hand = -(3.0 * y * torch.nn.functional.logsigmoid(logits) + (1 - y) * torch.nn.functional.logsigmoid(-logits)).mean()
print(loss, by_hand, torch.isclose(loss, by_hand))
per = nn.BCEWithLogitsLoss(reduction='none')(logits, y)
mask = torch.tensor([1, 1, 1, 0, 1, 1, 0, 1], dtype=torch.bool)
masked = per[mask].mean()
masked.backward()
print(per.shape, masked.item())
print(model.weight.grad, model.bias.grad)
probs = torch.sigmoid(logits.detach())
print((probs > 0.5).long(), probs.round(decimals=3))
