# ruff: noqa
# Tensors in lists and dicts, and in-place updates through them.
import torch
xs = [torch.tensor([1., 2.], requires_grad=True), torch.tensor(3.)]
d = {"w": torch.ones(2), 1: torch.zeros(1)}
d["w"].add_(1)
xs[1].mul_(2)
s = (xs[0] * d["w"]).sum()
s.backward()
del d["w"]
