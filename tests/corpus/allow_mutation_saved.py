# ruff: noqa
# allow_mutation_on_saved_tensors: an in-place change of a saved value does not break backward.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
with torch.autograd.graph.allow_mutation_on_saved_tensors():
    y = x * 1
    z = y.sin()
    y.mul_(2)
    s = z.sum()
    s.backward()
print(x.grad)
