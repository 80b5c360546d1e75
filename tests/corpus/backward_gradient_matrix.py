# ruff: noqa
# backward(gradient=...) on a matrix output: a vector-Jacobian product, and the error without it.
import torch
W = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
x = torch.tensor([1.0, -1.0])
Y = W * x
try:
    Y.backward()
except RuntimeError as e:
    print("error:", e)
G = torch.tensor([[1.0, 0.0], [0.5, 2.0]])
Y.backward(gradient=G)
print(W.grad)
Y2 = W @ W
Y2.backward(torch.eye(2))
print(W.grad)
