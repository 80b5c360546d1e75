# ruff: noqa
# Saving the best weights and restoring them with load_state_dict after a bad step.
import copy
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
x = torch.randn(6, 2)
y = torch.randn(6, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
best_loss, best_state = None, None
for step in range(4):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    if best_loss is None or loss.item() < best_loss:
        best_loss = loss.item()
        best_state = copy.deepcopy(model.state_dict())
    loss.backward()
    opt.step()
print(model.weight._version)
model.load_state_dict(best_state)
print(model.weight._version, model.weight.grad is not None)
print(nn.functional.mse_loss(model(x), y).item(), best_loss)
