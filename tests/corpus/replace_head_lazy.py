# ruff: noqa
# Transfer learning moves: replace a model's head with a new Linear, freeze the rest with model.requires_grad_(False), and a LazyLinear that gets its shape on the first call.
import torch
from torch import nn
torch.manual_seed(0)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(torch.relu(self.body(x)))

model = Net()
model.requires_grad_(False)
model.fc = nn.Linear(4, 5)
print([n for n, p in model.named_parameters() if p.requires_grad])
x = torch.randn(2, 3)
out = model(x)
out.sum().backward()
print(model.body.weight.grad, model.fc.bias.grad)
lazy = nn.LazyLinear(2)
print(type(lazy.weight).__name__)
y = lazy(x)
print(type(lazy.weight).__name__, lazy.weight.shape)
y.sum().backward()
print(lazy.bias.grad)
model.extra = nn.Parameter(torch.ones(1))
print(len(list(model.parameters())))
del model.extra
print(len(list(model.parameters())))
