# ruff: noqa
# XOR with a hand-rolled MLP whose parameters sit in a list, updated the old-tutorial way: p.data -= lr * p.grad.data; p.grad.data.zero_().
import torch
torch.manual_seed(21)
X = torch.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
Y = torch.tensor([[0.], [1.], [1.], [0.]])
W1 = torch.randn(2, 4, requires_grad=True)
b1 = torch.zeros(4, requires_grad=True)
W2 = torch.randn(4, 1, requires_grad=True)
b2 = torch.zeros(1, requires_grad=True)
params = [W1, b1, W2, b2]
for epoch in range(25):
    h = torch.sigmoid(X @ W1 + b1)
    out = torch.sigmoid(h @ W2 + b2)
    loss = ((out - Y) ** 2).mean()
    loss.backward()
    for p in params:
        p.data -= 2.0 * p.grad.data
        p.grad.data.zero_()
    if epoch % 8 == 0:
        print(epoch, loss.item())
print(out.detach().round(decimals=2).flatten(), [p._version for p in params])
