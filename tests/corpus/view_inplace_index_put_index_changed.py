# ruff: noqa
# index_put_ on a row of a non-leaf: the IndexPutBackward0 inside CopySlices saved the index
# tensor (in a list of indices); changing idx afterwards makes backward fail.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
v = torch.randn(2, requires_grad=True)
idx = torch.tensor([0, 2])
b = w * 2
row = b[1]
row.index_put_((idx,), v * 3)
idx.add_(0)
try:
    b.backward(gradient=torch.ones_like(b))
except RuntimeError as e:
    print("inplace" in str(e))
print(w.grad)
