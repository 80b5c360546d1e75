# ruff: noqa
# Jacobian rows: one autograd.grad per output in a loop with retain_graph, and all at once with is_grads_batched=True.
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.stack([x[0] * x[1], x[1] ** 2, x.sum()])
rows = []
for i in range(3):
    v = torch.zeros(3)
    v[i] = 1.0
    (g,) = torch.autograd.grad(y, x, grad_outputs=v, retain_graph=True)
    rows.append(g)
J = torch.stack(rows)
print(J)
(Jb,) = torch.autograd.grad(y, x, grad_outputs=torch.eye(3), is_grads_batched=True)
print(torch.equal(J, Jb), x.grad)
