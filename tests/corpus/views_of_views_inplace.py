# ruff: noqa
# A view of a view changed in place, and view-changing in-place ops (unsqueeze_, transpose_, as_strided).
import torch
base = torch.arange(6.).reshape(2, 3).requires_grad_()
a = base * 1
v = a[0]
w = v[1:]
w.mul_(10)
t = a.t()
t.transpose_(0, 1)
u = a.view(6)
u.unsqueeze_(0)
s = a.as_strided((2,), (3,))
s.add_(100)
loss = (a * a).sum()
loss.backward()
print(a, base.grad)
