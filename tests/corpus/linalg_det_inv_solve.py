# ruff: noqa
# Gradients through torch.linalg: det, inv and solve, checked against the textbook formulas.
import torch
torch.manual_seed(0)
A = torch.randn(3, 3, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64)
A.requires_grad_()
d = torch.linalg.det(A)
d.backward()
formula = d.detach() * torch.linalg.inv(A.detach()).T
print("d det/dA matches", torch.allclose(A.grad, formula))
A.grad = None
b = torch.ones(3, dtype=torch.float64)
x = torch.linalg.solve(A, b)
loss = x.pow(2).sum()
loss.backward()
g_solve = A.grad.clone()
A.grad = None
x2 = torch.linalg.inv(A) @ b
x2.pow(2).sum().backward()
print("solve vs inv grads match", torch.allclose(g_solve, A.grad))
