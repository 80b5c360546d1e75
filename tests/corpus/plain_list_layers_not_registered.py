# ruff: noqa
# The classic bug: layers kept in a plain Python list are not registered, so parameters() and the optimizer miss them; nn.ModuleList fixes it.
import torch
import torch.nn as nn
torch.manual_seed(25)

class Broken(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(2, 2) for _ in range(2)]
        self.out = nn.Linear(2, 1)

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.out(x)

class Fixed(Broken):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(self.layers)

b = Broken()
print(len(list(b.parameters())))
opt = torch.optim.SGD(b.parameters(), lr=0.1)
x, y = torch.randn(4, 2), torch.randn(4, 1)
before = b.layers[0].weight.clone()
loss = nn.functional.mse_loss(b(x), y)
loss.backward()
opt.step()
print(b.layers[0].weight.grad is not None, torch.equal(before, b.layers[0].weight))
f = Fixed()
print(len(list(f.parameters())), [n for n, _ in f.named_parameters()][:2])
