# ruff: noqa
# Optimizer implementations a tutorial may pick: Adam fused=True, SGD foreach=True, RMSprop, and an AveragedModel (SWA/EMA) updated each step.
import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel
torch.manual_seed(0)
x = torch.randn(4, 2)
y = torch.randn(4, 1)
models = [nn.Linear(2, 1) for _ in range(3)]
opts = [torch.optim.Adam(models[0].parameters(), lr=0.1, fused=True),
        torch.optim.SGD(models[1].parameters(), lr=0.1, momentum=0.9, foreach=True),
        torch.optim.RMSprop(models[2].parameters(), lr=0.01)]
ema = AveragedModel(models[0], multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.9))
for step in range(2):
    for m, opt in zip(models, opts):
        opt.zero_grad()
        nn.functional.mse_loss(m(x), y).backward()
        opt.step()
    ema.update_parameters(models[0])
print([m.weight.detach() for m in models])
print(ema.module.weight, ema.n_averaged)
