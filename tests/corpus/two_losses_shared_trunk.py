# ruff: noqa
# Two losses from a shared trunk: retain_graph on the first backward only.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
trunk = torch.sigmoid(x * 3)
loss_a = trunk.sum()
loss_b = (trunk ** 2).sum()
loss_a.backward(retain_graph=True)
ga = x.grad.clone()
loss_b.backward()
try:
    loss_a.backward()
except RuntimeError as e:
    again = "freed" if "second time" in str(e) else str(e)
print(ga, x.grad, again)
