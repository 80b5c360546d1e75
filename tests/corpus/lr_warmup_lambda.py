# ruff: noqa
# Warm-up then decay with LambdaLR, printed with get_last_lr(), and a manual change of param_groups' lr.
import torch
torch.manual_seed(0)
w = torch.nn.Parameter(torch.randn(3))
opt = torch.optim.SGD([w], lr=0.5, momentum=0.9)
warmup = 2
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda epoch: (epoch + 1) / warmup if epoch < warmup else 0.5 ** (epoch - warmup))
lrs = []
for epoch in range(5):
    loss = (w ** 2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    lrs.append(sched.get_last_lr()[0])
    print(epoch, sched.get_last_lr(), w.detach())
for g in opt.param_groups:
    g["lr"] = 0.01
opt.zero_grad()
(w ** 2).sum().backward()
opt.step()
print(lrs, opt.param_groups[0]["lr"], opt.state[w]["momentum_buffer"])
