# ruff: noqa
# .grad set by hand, set to None, accumulated on a non-leaf with retain_grad.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
h = x * 2
h.retain_grad()
(h * h).sum().backward()
gh = h.grad.clone()
x.grad = torch.tensor([100., 100.])
(x * 3).sum().backward()
x.grad = None
h.grad.zero_()
print(gh, x.grad, h.grad)
