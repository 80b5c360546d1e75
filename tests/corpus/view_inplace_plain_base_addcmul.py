# ruff: noqa
# A slice of a tensor that needs no grad, written in place from one that does (addcmul_): the base
# now hangs from a CopySlices whose AddcmulBackward0 saved c; changing c makes backward fail.
import torch
torch.manual_seed(0)
x = torch.zeros(6)
v = torch.randn(3, requires_grad=True)
c = torch.randn(3)
x[:3].addcmul_(v, c)
c.add_(1)
try:
    x.backward(gradient=torch.ones_like(x))
except RuntimeError as e:
    print("inplace" in str(e))
print(v.grad)
