# ruff: noqa
# Keeping a list of intermediate activations and calling retain_grad() on each to see the gradient at every layer.
import torch
torch.manual_seed(5)
layers = [torch.randn(3, 3, requires_grad=True) for _ in range(3)]
h = torch.randn(2, 3)
acts = []
for W in layers:
    h = torch.tanh(h @ W)
    h.retain_grad()
    acts.append(h)
loss = h.sum()
loss.backward()
for i, a in enumerate(acts):
    print(i, a.grad.abs().mean().item(), a.is_leaf)
print([W.grad.shape for W in layers])
print(acts[-1].grad)
