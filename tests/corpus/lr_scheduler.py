# ruff: noqa
# A learning-rate schedule over a few steps.
import torch
torch.manual_seed(0)
w = torch.randn(2, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.5, momentum=0.5, nesterov=True)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
lrs = []
for epoch in range(4):
    opt.zero_grad()
    loss = (w - 1).pow(2).sum()
    loss.backward()
    opt.step()
    sched.step()
    lrs.append(sched.get_last_lr()[0])
print(lrs, w)
