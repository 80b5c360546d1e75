# ruff: noqa
# F.normalize, cosine_similarity and cdist gradients, and the zero vector that normalize guards with eps.
import torch
import torch.nn.functional as F
a = torch.tensor([[3.0, 4.0], [0.0, 0.0]], requires_grad=True)
n = F.normalize(a, dim=1)
n.sum().backward()
print(n, a.grad)
u = torch.tensor([[1.0, 0.0], [1.0, 1.0]], requires_grad=True)
v = torch.tensor([[0.0, 2.0], [2.0, 2.0]])
cos = F.cosine_similarity(u, v, dim=1)
d = torch.cdist(u, v)
(cos.sum() + d.sum()).backward()
print(cos, d, u.grad)
