# ruff: noqa
# A shape mistake: predictions (N, 1) against targets (N,) broadcast to (N, N) in mse_loss, with a UserWarning; the loss is wrong but backward runs.
import torch
import torch.nn.functional as F
torch.manual_seed(26)
model = torch.nn.Linear(2, 1)
x = torch.randn(4, 2)
y = torch.randn(4)
pred = model(x)
wrong = F.mse_loss(pred, y)
right = F.mse_loss(model(x).squeeze(1), y)
print(pred.shape, y.shape, (pred - y).shape)
print(wrong.item(), right.item())
wrong.backward()
g_wrong = model.weight.grad.clone()
model.zero_grad()
right.backward()
print(g_wrong, model.weight.grad)
