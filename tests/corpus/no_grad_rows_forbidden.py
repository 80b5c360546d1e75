# Halving each row of a weight under no_grad: the rows are views made under no_grad, and once their
# base is changed in place PyTorch forbids them in autograd (it raises when asked their grad_fn)
import torch

W = torch.ones(3, 2, requires_grad=True)
with torch.no_grad():
    for row in W:
        row.div_(2)
print(W)
loss = (W * 3).sum()
loss.backward()
print(W.grad)
