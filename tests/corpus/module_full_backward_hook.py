# ruff: noqa
# register_full_backward_hook that changes the gradient flowing into a module's input.
import torch
import torch.nn as nn
torch.manual_seed(0)
lin = nn.Linear(3, 2)
def halve(module, grad_input, grad_output):
    return tuple(None if g is None else g * 0.5 for g in grad_input)
h = lin.register_full_backward_hook(halve)
x = torch.randn(4, 3, requires_grad=True)
out = lin(x)
loss = out.pow(2).sum()
loss.backward()
h.remove()
out2 = lin(x)
out2.sum().backward()
print(x.grad)
