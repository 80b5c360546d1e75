# ruff: noqa
# The manual SGD step: in-place update under no_grad, then zero the gradient.
import torch
torch.manual_seed(5)
X = torch.randn(6, 2)
true_w = torch.tensor([2.0, -3.0])
Y = X @ true_w
w = torch.zeros(2, requires_grad=True)
for it in range(5):
    loss = ((X @ w - Y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w.sub_(0.1 * w.grad)
        w.grad.zero_()
    print(f"{it}: {loss.item():.4f}")
print(w)
