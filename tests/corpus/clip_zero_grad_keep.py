# ruff: noqa
# Gradient clipping, zero_grad(set_to_none=False) and a step LR scheduler.
import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Linear(2, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.5, momentum=0.9)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
x = torch.randn(3, 2)
for epoch in range(3):
    opt.zero_grad(set_to_none=False)
    loss = (net(x) ** 2).sum() * 10
    loss.backward()
    norm = nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    nn.utils.clip_grad_value_(net.parameters(), 0.2)
    opt.step()
    sched.step()
print(net.weight, sched.get_last_lr(), norm)
