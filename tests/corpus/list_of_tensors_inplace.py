# ruff: noqa
# Tensors kept in a list and changed in place through the list.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
acts = []
h = x
for i in range(3):
    h = h * 2
    acts.append(h)
acts[1].add_(1)
out = acts[-1].sum()
out.backward()
acts[0][0] = 0.0
print(acts, x.grad)
