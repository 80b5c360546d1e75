# ruff: noqa
# A second backward without retain_graph fails: freed, not stale.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = (x * x).sum()
y.backward()
y.backward()
