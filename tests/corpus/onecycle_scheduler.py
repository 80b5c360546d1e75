# ruff: noqa
# OneCycleLR changes the learning rate (and momentum) every batch; the learner prints the ramp.
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=6)
x = torch.randn(8, 2)
y = x.sum(dim=1, keepdim=True)
lrs = []
for step in range(6):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    sched.step()
    lrs.append(round(opt.param_groups[0]["lr"], 5))
print(lrs)
print(loss.item())
