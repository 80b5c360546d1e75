# ruff: noqa
# Freezing the bias halfway through training with requires_grad_(False): its .grad stops changing.
import torch
import torch.nn as nn
torch.manual_seed(0)
layer = nn.Linear(2, 1)
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
x = torch.randn(6, 2)
y = torch.randn(6, 1)
for step in range(4):
    if step == 2:
        layer.bias.requires_grad_(False)
        layer.bias.grad = None
    opt.zero_grad()
    loss = ((layer(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 4), layer.bias.requires_grad, layer.bias.grad)
