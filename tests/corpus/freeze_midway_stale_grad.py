# ruff: noqa
# Freezing a layer half way through training: zero_grad(set_to_none=False) keeps a zero .grad, and SGD momentum keeps moving the frozen weights.
import torch
import torch.nn as nn
torch.manual_seed(10)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
X, Y = torch.randn(6, 3), torch.randn(6, 1)
for step in range(4):
    if step == 2:
        for p in model[0].parameters():
            p.requires_grad_(False)
        print("frozen:", [p.requires_grad for p in model.parameters()])
    opt.zero_grad(set_to_none=False)
    loss = nn.functional.mse_loss(model(X), Y)
    loss.backward()
    before = model[0].weight.clone()
    opt.step()
    print(step, loss.item(), torch.equal(before, model[0].weight), model[0].weight.grad.abs().sum().item())
trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
print(trainable)
