# ruff: noqa
# Per-layer learning rates with param_groups, no weight decay on biases, and reading the optimizer's state after steps.
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if name.endswith("bias") else decay).append(p)
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}], lr=0.05)
x = torch.randn(4, 2)
y = torch.randn(4, 1)
for step in range(2):
    opt.zero_grad(set_to_none=False)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
state = opt.state[model[0].weight]
print(sorted(state.keys()), state["step"], state["exp_avg"].shape)
print([g["weight_decay"] for g in opt.param_groups], loss.item())
print(model[2].bias.grad)
