# ruff: noqa
# Per-sample gradients with torch.func.grad and vmap over a module's parameters.
import torch
from torch import nn
from torch.func import functional_call, grad, vmap
torch.manual_seed(3)
model = nn.Linear(3, 1)
params = {k: v.detach() for k, v in model.named_parameters()}
xs = torch.randn(4, 3)
ys = torch.randn(4, 1)
def loss_one(p, x, y):
    out = functional_call(model, p, (x.unsqueeze(0),))
    return ((out - y) ** 2).mean()
per = vmap(grad(loss_one), in_dims=(None, 0, 0))(params, xs, ys)
mean_w = per["weight"].mean(0)
loss = ((model(xs) - ys) ** 2).mean()
loss.backward()
print(per["weight"].shape, mean_w, model.weight.grad)
