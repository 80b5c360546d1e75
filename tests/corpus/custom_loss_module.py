# ruff: noqa
# A custom loss written as an nn.Module (focal loss), with a forward that the learner steps into.
import torch
import torch.nn as nn
class FocalLoss(nn.Module):
    def __init__(self, gamma=2.0):
        super().__init__()
        self.gamma = gamma
    def forward(self, logits, target):
        p = torch.sigmoid(logits)
        pt = torch.where(target == 1, p, 1 - p)
        return (-(1 - pt) ** self.gamma * torch.log(pt)).mean()
torch.manual_seed(0)
logits = torch.randn(5, requires_grad=True)
target = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0])
crit = FocalLoss()
loss = crit(logits, target)
loss.backward()
print(loss.item(), logits.grad)
