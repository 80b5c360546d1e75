# ruff: noqa
# Early stopping's trap: best = model.state_dict() holds the live tensors and keeps changing; a clone or deepcopy does not.
import copy
import torch
torch.manual_seed(0)
model = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
x = torch.randn(6, 2)
y = x[:, :1] * 2
best_loss = float("inf")
best = None
best_clone = None
best_copy = None
for epoch in range(4):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    if loss.item() < best_loss:
        best_loss = loss.item()
        best = model.state_dict()
        best_clone = {k: v.clone() for k, v in model.state_dict().items()}
        best_copy = copy.deepcopy(model.state_dict())
    print(epoch, loss.item())
print(best["weight"], best_clone["weight"], best_copy["weight"])
print(best["weight"] is model.weight, best["weight"].data_ptr() == model.weight.data_ptr())
model.load_state_dict(best_clone)
print(model.weight, model.weight.requires_grad)
