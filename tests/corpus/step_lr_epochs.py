# ruff: noqa
# StepLR halves the learning rate every 2 epochs; the learner calls scheduler.step() per epoch.
import torch
w = torch.tensor([5.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.4)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
for epoch in range(5):
    loss = (w - 1.0).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print(epoch, sched.get_last_lr(), round(w.item(), 4))
