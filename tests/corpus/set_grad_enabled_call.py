# ruff: noqa
# torch.set_grad_enabled(False) called as a function holds over the following statements.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
torch.set_grad_enabled(False)
y = x * 2
y.add_(1)
torch.set_grad_enabled(True)
z = x * 2
with torch.no_grad():
    with torch.enable_grad():
        q = x * 5
    p = x * 6
print(y.requires_grad, z.requires_grad, q.requires_grad, p.requires_grad)
