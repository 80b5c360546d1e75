# ruff: noqa
# An in-place module (ReLU(inplace=True)) applied to a row of a non-leaf: its ReluBackward0 sits
# inside CopySlices and saved the row (its result); changing the tensor after makes backward fail.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
h = w * 2
relu = torch.nn.ReLU(inplace=True)
relu(h[0])
h.add_(1)
try:
    h.backward(gradient=torch.ones_like(h))
except RuntimeError as e:
    print("inplace" in str(e))
