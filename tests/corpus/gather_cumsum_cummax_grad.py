# ruff: noqa
# gather, cumsum and cummax gradients: where each output element came from.
import torch
x = torch.tensor([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]], requires_grad=True)
idx = torch.tensor([[2, 2], [0, 1]])
g = x.gather(1, idx)
cs = x.cumsum(1)
cm, where = x.cummax(1)
(g.sum() + (cs * torch.tensor([1.0, 2.0, 3.0])).sum() + cm.sum()).backward()
print(g, cs, cm, where, x.grad)
