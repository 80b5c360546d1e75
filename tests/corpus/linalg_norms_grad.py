# ruff: noqa
# Vector, Frobenius and nuclear norms: which gradients look like x / ||x||?
import torch
v = torch.tensor([3.0, 4.0], requires_grad=True)
n2 = torch.linalg.vector_norm(v)
n2.backward()
print(n2.item(), v.grad)
v.grad.zero_()
n1 = torch.linalg.vector_norm(v, ord=1)
n1.backward()
print(n1.item(), v.grad)
v.grad.zero_()
ninf = torch.linalg.vector_norm(v, ord=float("inf"))
ninf.backward()
print(ninf.item(), v.grad)
M = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
fro = torch.linalg.matrix_norm(M)
fro.backward()
print(torch.allclose(M.grad, M.detach() / fro.detach()))
