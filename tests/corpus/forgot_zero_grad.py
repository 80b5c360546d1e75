# ruff: noqa
# Forgetting opt.zero_grad(): each step uses the sum of all past gradients, and the loss runs away.
import torch
torch.manual_seed(0)
x = torch.linspace(-1, 1, 5).unsqueeze(1)
y = 3 * x + 1
model = torch.nn.Linear(1, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.3)
for step in range(4):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    print(step, round(loss.item(), 4), model.weight.grad.item())
    opt.step()
model2 = torch.nn.Linear(1, 1)
model2.load_state_dict({"weight": torch.tensor([[0.5]]), "bias": torch.tensor([0.0])})
opt2 = torch.optim.SGD(model2.parameters(), lr=0.3)
for step in range(4):
    opt2.zero_grad()
    loss = ((model2(x) - y) ** 2).mean()
    loss.backward()
    opt2.step()
print(model2.weight.item(), model2.bias.item(), model2.weight.grad)
