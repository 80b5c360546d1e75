# ruff: noqa
# A forward pre-hook that rewrites the input, with_kwargs, and a hook counting calls.
import torch
from torch import nn
torch.manual_seed(2)
net = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))
calls = {"n": 0}
def double_input(module, args):
    calls["n"] += 1
    return (args[0] * 2,)
h = net[0].register_forward_pre_hook(double_input)
x = torch.ones(2, 3, requires_grad=True)
y = net(x).sum()
y.backward()
g_hooked = x.grad.clone()
h.remove()
x.grad = None
net(x).sum().backward()
print(calls, g_hooked, x.grad)
