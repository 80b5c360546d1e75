# ruff: noqa
# Logistic regression three ways: sigmoid + hand-written log loss, BCELoss, BCEWithLogitsLoss; same gradients.
import torch
torch.manual_seed(0)
X = torch.randn(6, 2)
y = (X[:, 0] > 0).float()
w = torch.zeros(2, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
z = X @ w + b
p = torch.sigmoid(z)
loss1 = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
loss1.backward()
g1 = (w.grad.clone(), b.grad.clone())
w.grad.zero_(); b.grad.zero_()
loss2 = torch.nn.BCELoss()(torch.sigmoid(X @ w + b), y)
loss2.backward()
g2 = (w.grad.clone(), b.grad.clone())
w.grad = None; b.grad = None
loss3 = torch.nn.BCEWithLogitsLoss()(X @ w + b, y)
loss3.backward()
print(loss1.item(), loss2.item(), loss3.item())
print(g1, g2, (w.grad, b.grad))
print(torch.allclose(g1[0], w.grad), torch.allclose(g2[1], b.grad))
for epoch in range(3):
    w.grad = None; b.grad = None
    loss = torch.nn.functional.binary_cross_entropy_with_logits(X @ w + b, y)
    loss.backward()
    with torch.no_grad():
        w -= 1.0 * w.grad
        b -= 1.0 * b.grad
    acc = ((X @ w + b > 0).float() == y).float().mean()
    print(epoch, round(loss.item(), 4), acc.item())
