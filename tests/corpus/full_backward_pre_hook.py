# ruff: noqa
# register_full_backward_pre_hook scales the gradient arriving at a module; a forward hook replaces its output.
import torch
from torch import nn
torch.manual_seed(3)
lin = nn.Linear(2, 2)
seen = []
def pre(module, grad_output):
    seen.append(grad_output[0].clone())
    return (grad_output[0] * 2,)
def fwd(module, inputs, output):
    return output + 1
h1 = lin.register_full_backward_pre_hook(pre)
h2 = lin.register_forward_hook(fwd)
x = torch.tensor([[1.0, -1.0]], requires_grad=True)
out = lin(x)
out.sum().backward()
print(out, x.grad, lin.bias.grad, seen)
h1.remove()
h2.remove()
x.grad = None
lin.zero_grad()
lin(x).sum().backward()
print(x.grad, lin.bias.grad)
