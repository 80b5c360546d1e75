# ruff: noqa
# Calls that return the same tensor: .to(device) on the device it is on, .float() of a float, .contiguous(), requires_grad_(); and the ones that copy.
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.tensor([1.0, 2.0])
y = x.to(device)
z = x.float()
c = x.contiguous()
print(y is x, z is x, c is x)
w = torch.zeros(2).requires_grad_()
same = w.requires_grad_(True)
print(same is w)
d = x.double()
e = x.clone()
print(d is x, e is x, d.dtype)
y.add_(1)
print(x, z, c, e)
out = (w * y).sum()
out.backward()
print(w.grad, same.grad)
