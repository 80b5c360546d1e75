# ruff: noqa
# nn.ModuleDict of heads; training only the head picked by name each step.
import torch
import torch.nn as nn
torch.manual_seed(0)
heads = nn.ModuleDict({"cls": nn.Linear(2, 3), "reg": nn.Linear(2, 1)})
opt = torch.optim.SGD(heads.parameters(), lr=0.1)
x = torch.randn(4, 2)
for task in ["cls", "reg", "cls"]:
    opt.zero_grad()
    out = heads[task](x)
    loss = out.pow(2).mean()
    loss.backward()
    opt.step()
    print(task, loss.item(), heads["reg"].weight.grad is None)
for name, m in heads.items():
    print(name, tuple(m.weight.shape))
