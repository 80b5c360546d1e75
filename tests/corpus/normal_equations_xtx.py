# ruff: noqa
# Least squares two ways: the normal equations (X.T @ X) w = X.T @ y solved in closed form, and gradient descent reaching the same w.
import torch
torch.manual_seed(15)
X = torch.cat([torch.ones(12, 1), torch.randn(12, 2)], dim=1)
true_w = torch.tensor([0.5, 2.0, -1.0])
y = X @ true_w + 0.01 * torch.randn(12)
XtX = X.T @ X
w_closed = torch.linalg.solve(XtX, X.T @ y)
print(XtX.shape, w_closed)
w = torch.zeros(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for i in range(60):
    opt.zero_grad()
    loss = ((X @ w - y) ** 2).mean()
    loss.backward()
    opt.step()
print(w.detach(), (w.detach() - w_closed).abs().max() < 1e-2)
grad_formula = 2 / 12 * X.T @ (X @ w.detach() - y)
print(torch.allclose(grad_formula, w.grad, atol=1e-6))
