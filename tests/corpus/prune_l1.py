# ruff: noqa
# torch.nn.utils.prune: l1_unstructured swaps weight for weight_orig and weight_mask, a forward uses their product, prune.remove makes it permanent.
import torch
from torch import nn
from torch.nn.utils import prune
torch.manual_seed(0)
layer = nn.Linear(3, 2)
prune.l1_unstructured(layer, name="weight", amount=0.5)
print([n for n, _ in layer.named_parameters()], [n for n, _ in layer.named_buffers()])
print(layer.weight_mask)
out = layer(torch.randn(2, 3)).sum()
out.backward()
print(layer.weight_orig.grad)
prune.remove(layer, "weight")
print([n for n, _ in layer.named_parameters()], layer.weight)
