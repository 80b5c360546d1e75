# ruff: noqa
# Two losses on one shared hidden layer: the first backward keeps the graph, the second frees it, a third fails.
import torch
torch.manual_seed(0)
x = torch.randn(3)
W = torch.randn(3, 3, requires_grad=True)
hidden = torch.sigmoid(W @ x)
loss_a = hidden.sum()
loss_b = (hidden ** 2).mean()
loss_a.backward(retain_graph=True)
print("after loss_a", W.grad.sum().item())
loss_b.backward()
print("after loss_b", W.grad.sum().item())
try:
    loss_a.backward()
except RuntimeError as err:
    print("third backward:", str(err).split(".")[0])
W.grad = None
loss_c = hidden.sum() * 2
try:
    loss_c.backward()
except RuntimeError as err:
    print("new root, old freed graph:", type(err).__name__)
print(W.grad)
