# ruff: noqa
# index_put_ with accumulate=True sums repeated indices; without it, one write wins.
import torch
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
idx = torch.tensor([0, 0, 2])
vals = w * 10
acc = torch.zeros(4).index_put_((idx,), vals, accumulate=True)
print(acc)
acc.sum().backward()
print(w.grad)
w.grad = None
plain = torch.zeros(4)
plain[idx] = vals
print(plain, plain.grad_fn.name())
try:
    plain.sum().backward()
except RuntimeError as e:
    print("second pass through vals:", "second time" in str(e))
vals = w * 10
plain = torch.zeros(4)
plain[idx] = vals
plain.sum().backward()
print(w.grad)
