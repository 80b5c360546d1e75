# ruff: noqa
# The learner edits .grad in place between backward calls and in a hook.
import torch
w = torch.tensor([1., 2.], requires_grad=True)
(w * w).sum().backward()
w.grad *= 0.5
w.grad[0] = 10.
(w * 3).sum().backward()
g = w.grad
g.clamp_(max=5.)
w.grad.data.add_(1)
print(w.grad, g)
