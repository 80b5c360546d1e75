# ruff: noqa
# CS231n-style two-layer net: backprop written out by hand (dscores, dW2, dhidden, dW1), checked against autograd.
import torch
torch.manual_seed(0)
N, D, H, C = 5, 4, 6, 3
X = torch.randn(N, D)
y = torch.tensor([0, 1, 2, 1, 0])
W1 = (0.1 * torch.randn(D, H)).requires_grad_()
b1 = torch.zeros(H, requires_grad=True)
W2 = (0.1 * torch.randn(H, C)).requires_grad_()
b2 = torch.zeros(C, requires_grad=True)
reg = 0.01

hidden = torch.relu(X @ W1 + b1)
scores = hidden @ W2 + b2
shifted = scores - scores.max(dim=1, keepdim=True).values
probs = shifted.exp() / shifted.exp().sum(dim=1, keepdim=True)
data_loss = -probs[torch.arange(N), y].log().mean()
reg_loss = 0.5 * reg * ((W1 * W1).sum() + (W2 * W2).sum())
loss = data_loss + reg_loss
loss.backward()

with torch.no_grad():
    dscores = probs.clone()
    dscores[torch.arange(N), y] -= 1
    dscores /= N
    dW2 = hidden.t() @ dscores + reg * W2
    db2 = dscores.sum(0)
    dhidden = dscores @ W2.t()
    dhidden[hidden <= 0] = 0
    dW1 = X.t() @ dhidden + reg * W1
    db1 = dhidden.sum(0)

for name, mine, auto in [("W1", dW1, W1.grad), ("b1", db1, b1.grad), ("W2", dW2, W2.grad), ("b2", db2, b2.grad)]:
    rel = ((mine - auto).abs().max() / auto.abs().max().clamp(min=1e-8)).item()
    print(f"{name} max relative error: {rel:e}", torch.allclose(mine, auto, atol=1e-6))
