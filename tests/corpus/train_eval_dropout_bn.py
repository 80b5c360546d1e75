# ruff: noqa
# model.train() vs model.eval() with Dropout and BatchNorm1d: random outputs, running stats moving, eval repeatable.
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Dropout(0.5), nn.Linear(4, 1))
x = torch.randn(5, 3)
print(model.training, model[1].running_mean, model[1].num_batches_tracked)
out1 = model(x)
out2 = model(x)
print("train outputs equal?", torch.equal(out1, out2))
print(model[1].running_mean, model[1].running_var, model[1].num_batches_tracked)
model.eval()
with torch.no_grad():
    e1 = model(x)
    e2 = model(x)
print("eval outputs equal?", torch.equal(e1, e2), e1.requires_grad)
print(model[1].num_batches_tracked)
model.train()
loss = model(x).sum()
loss.backward()
print(model[1].weight.grad, model[0].bias.grad)
print([m.training for m in model])
