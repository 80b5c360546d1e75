# ruff: noqa
# Forward, forward-pre and full backward hooks on modules.
import torch
from torch import nn
torch.manual_seed(0)
log = []
lin = nn.Linear(2, 2)
def pre(mod, inp):
    log.append("pre")
    return (inp[0] * 2,)
def fwd(mod, inp, out):
    log.append("fwd")
    return out + 1
def bwd(mod, gin, gout):
    log.append("bwd")
    return (gin[0] * 3,)
h1 = lin.register_forward_pre_hook(pre)
h2 = lin.register_forward_hook(fwd)
h3 = lin.register_full_backward_hook(bwd)
x = torch.randn(3, 2, requires_grad=True)
out = lin(x)
out.sum().backward()
for h in (h1, h2, h3):
    h.remove()
print(log, x.grad)
