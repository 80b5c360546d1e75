# ruff: noqa
# Reading w[0].grad gives None with a warning: indexing makes a new non-leaf tensor; the gradient lives in w.grad[0].
import torch
import warnings
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
loss = (w ** 2).sum()
loss.backward()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    first = w[0]
    print(first.grad, first.is_leaf, len(caught))
print(w.grad[0], w.grad)
row = w.grad[1:]
row.zero_()
print(w.grad)
