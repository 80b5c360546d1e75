# ruff: noqa
# A learner tags tensors with a Python attribute to track where they came from, then lists them.
import torch
w = torch.tensor([0.5, -0.5], requires_grad=True)
w.tag = "weights"
h = w * 2
h.tag = "hidden"
tensors = [w, h]
for t in tensors:
    print(t.tag, sorted(vars(t)), t.requires_grad)
h.sum().backward()
print(w.grad, getattr(w.grad, "tag", None))
