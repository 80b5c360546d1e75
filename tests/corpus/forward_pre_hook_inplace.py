# ruff: noqa
# A forward pre-hook that changes the module's input in place, and a forward hook that replaces the output.
import torch
import torch.nn as nn
torch.manual_seed(0)
lin = nn.Linear(2, 2)
def pre(module, args):
    args[0].mul_(2)
def post(module, args, out):
    return out * 0 + out.detach()
lin.register_forward_pre_hook(pre)
lin.register_forward_hook(post)
x = torch.tensor([[1., 2.]])
xc = x.clone()
y = lin(xc)
y.sum().backward()
print(xc, y, lin.weight.grad)
