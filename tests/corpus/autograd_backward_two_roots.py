# ruff: noqa
# torch.autograd.backward with two losses and a weight for each: it fills .grad like loss.backward() does, summing both losses' gradients.
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor(0.5, requires_grad=True)
l1 = (w * b).sum()
l2 = (w ** 2).sum()
torch.autograd.backward([l1, l2], [torch.tensor(1.0), torch.tensor(2.0)])
print(w.grad, b.grad)
l3 = (w * b).sum()
l3.backward(inputs=[b])
print(w.grad, b.grad)
g_w, = torch.autograd.grad((w * 3).sum(), w)
print(g_w, w.grad)
