# ruff: noqa
# Weight decay three ways: an L2 term in the loss, w.grad += wd * w by hand, and SGD(weight_decay=...).
import torch
torch.manual_seed(0)
X = torch.randn(6, 3)
y = torch.randn(6)
w0 = torch.randn(3)
wd, lr = 0.1, 0.05
w1 = w0.clone().requires_grad_()
w2 = w0.clone().requires_grad_()
w3 = torch.nn.Parameter(w0.clone())
opt = torch.optim.SGD([w3], lr=lr, weight_decay=wd)
for step in range(2):
    loss1 = ((X @ w1 - y) ** 2).mean() + wd / 2 * (w1 ** 2).sum()
    loss1.backward()
    with torch.no_grad():
        w1 -= lr * w1.grad
    w1.grad.zero_()
    loss2 = ((X @ w2 - y) ** 2).mean()
    loss2.backward()
    with torch.no_grad():
        w2.grad += wd * w2
        w2.sub_(lr * w2.grad)
    w2.grad = None
    opt.zero_grad()
    loss3 = ((X @ w3 - y) ** 2).mean()
    loss3.backward()
    opt.step()
    print(step, w1.detach(), w2.detach(), w3.detach())
print((w1 - w3).abs().max().item(), (w2 - w3).abs().max().item())
