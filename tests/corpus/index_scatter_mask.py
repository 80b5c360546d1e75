# ruff: noqa
# index_put_, scatter_ and masked_fill_ on a tensor in the graph.
import torch
w = torch.tensor([1., 2., 3., 4.], requires_grad=True)
a = w * 2
a.index_put_((torch.tensor([0, 2]),), torch.tensor([10., 30.]))
b = w.clone()
b.scatter_(0, torch.tensor([1, 3]), torch.tensor([-1., -3.]))
c = w * w
c.masked_fill_(c > 5, 0.)
loss = (a + b + c).sum()
loss.backward()
