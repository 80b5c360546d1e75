# ruff: noqa
# Index writes whose inner op saved a tensor, that tensor then changed in place: the index tensor of
# t[idx] = v and the mask of t[mask] = 0 (IndexPutBackward0 saved them), c of t[0:2] *= c (the
# MulBackward0 inside CopySlices saved it), c of t[idx] *= c, and a sigmoid_ on a slice whose saved
# result a later write to the slice changed. Each backward fails.
import torch
torch.manual_seed(0)
x = torch.randn(5, requires_grad=True)
def run(t):
    try:
        t.sum().backward()
        print("ran", x.grad)
    except RuntimeError as e:
        print("inplace" in str(e))
t = x * 1
idx = torch.tensor([0, 2])
v = torch.randn(2, requires_grad=True)
t[idx] = v * 2
idx.add_(1)
run(t)
t = x * 1
mask = t > 0
t[mask] = 0.
mask.logical_not_()
run(t)
t = x * 1
c = torch.randn(2)
t[0:2] *= c
c.add_(1)
run(t)
t = x * 1
c = torch.randn(2)
t[idx] *= c
c.add_(1)
run(t)
t = x * 1
t[0:2].sigmoid_()
t[0:2] *= 2
run(t)
t = x * 1
t[1:3] = t[1:3].exp_()
run(t)
