# ruff: noqa
# copy.deepcopy of a leaf keeps requires_grad; of a non-leaf it raises; clone keeps the graph.
import copy
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
w2 = copy.deepcopy(w)
y = w * 2
try:
    copy.deepcopy(y)
except RuntimeError as e:
    print("error:", str(e)[:70])
c = y.clone()
c.sum().backward()
(w2 * 5).sum().backward()
print(w2.requires_grad, w2.is_leaf, w.grad, w2.grad, c.grad_fn.name())
