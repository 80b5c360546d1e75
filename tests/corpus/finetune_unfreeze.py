# ruff: noqa
# Fine-tuning: freeze the backbone with requires_grad_(False), train the head only, then unfreeze and add a param group.
import torch
from torch import nn
torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
head = nn.Linear(4, 2)
model = nn.Sequential(backbone, head)
for p in backbone.parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1)
x = torch.randn(5, 3)
target = torch.tensor([0, 1, 1, 0, 1])
before = backbone[0].weight.clone()
loss = nn.functional.cross_entropy(model(x), target)
loss.backward()
opt.step()
print(backbone[0].weight.grad, torch.equal(before, backbone[0].weight), head.weight.grad.shape)
print(sum(p.numel() for p in model.parameters() if p.requires_grad))
for p in backbone.parameters():
    p.requires_grad = True
opt.add_param_group({"params": backbone.parameters(), "lr": 0.01})
opt.zero_grad()
loss = nn.functional.cross_entropy(model(x), target)
loss.backward()
opt.step()
print(backbone[0].weight.grad.abs().sum().item() > 0, len(opt.param_groups), loss.item())
