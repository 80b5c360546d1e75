# ruff: noqa
# A generator yields shuffled mini-batches; plain SGD by hand under no_grad.
import torch
torch.manual_seed(0)
X = torch.randn(12, 2)
Y = X @ torch.tensor([[2.0], [-1.0]]) + 0.5
def batches(X, Y, size):
    perm = torch.randperm(X.shape[0])
    for i in range(0, X.shape[0], size):
        idx = perm[i:i + size]
        yield X[idx], Y[idx]
w = torch.zeros(2, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for epoch in range(3):
    for xb, yb in batches(X, Y, 4):
        loss = ((xb @ w + b - yb) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
        w.grad.zero_()
        b.grad.zero_()
    print(epoch, loss.item())
print(w.flatten(), b)
