# ruff: noqa
# A program that patches Tensor methods (detach, clone, tolist) sees only its own calls to them.
import torch
calls = []
orig_tolist = torch.Tensor.tolist
orig_clone = torch.Tensor.clone
orig_detach = torch.Tensor.detach
def tolist(self):
    calls.append("tolist")
    return orig_tolist(self)
def clone(self, *a, **k):
    calls.append("clone")
    return orig_clone(self, *a, **k)
def detach(self):
    calls.append("detach")
    return orig_detach(self)
torch.Tensor.tolist = tolist
torch.Tensor.clone = clone
torch.Tensor.detach = detach
try:
    x = torch.tensor([1., 2.], requires_grad=True)
    y = (x * 3).sum()
    y.backward()
    g = x.grad.clone()
finally:
    torch.Tensor.tolist = orig_tolist
    torch.Tensor.clone = orig_clone
    torch.Tensor.detach = orig_detach
print(calls)
