# ruff: noqa
# Batched matmul: bmm vs a Python loop of matmuls give the same gradients.
import torch
torch.manual_seed(0)
A = torch.randn(3, 2, 4, requires_grad=True)
B = torch.randn(3, 4, 2, requires_grad=True)
C = torch.bmm(A, B)
C.sum().backward()
gA = A.grad.clone()
A.grad = None
B.grad = None
outs = [A[i] @ B[i] for i in range(3)]
torch.stack(outs).sum().backward()
print(torch.allclose(gA, A.grad), C.shape)
