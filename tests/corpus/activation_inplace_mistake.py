# ruff: noqa
# In-place on activations: relu_() after a matmul is fine, sigmoid's output changed in place breaks backward.
import torch
torch.manual_seed(0)
x = torch.randn(2, 3)
W = torch.randn(3, 3, requires_grad=True)
h = x @ W
h.relu_()
h.sum().backward()
print(W.grad)
W.grad = None
s = torch.sigmoid(x @ W)
s.mul_(2)
try:
    s.sum().backward()
except RuntimeError as e:
    print("sigmoid then mul_:", str(e)[:80])
t = torch.sigmoid(x @ W)
t = t * 2
t.sum().backward()
print(W.grad)
u = torch.exp(x @ W)
u[0, 0] = 0.0
try:
    u.sum().backward()
except RuntimeError as e:
    print("exp then setitem:", str(e)[:80])
