# ruff: noqa
# A generator that yields tensors built from a parameter, consumed by a loop and by sum().
import torch
w = torch.tensor([1., 2.], requires_grad=True)
def powers(t, n):
    p = torch.ones_like(t)
    for _ in range(n):
        p = p * t
        yield p
acc = 0
for q in powers(w, 3):
    acc = acc + q.sum()
total = sum(q.sum() for q in powers(w, 2))
(acc + total).backward()
print(w.grad)
