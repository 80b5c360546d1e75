# ruff: noqa
# torch.func: grad with has_aux, grad_and_value, jacfwd against jacrev, vmap of grad.
import torch
from torch.func import grad, grad_and_value, jacfwd, jacrev, vmap
def loss_fn(w, x):
    pred = x @ w
    loss = (pred ** 2).mean()
    return loss, pred
w = torch.tensor([0.5, -1.0, 2.0])
x = torch.tensor([[1., 2., 3.], [0., 1., -1.]])
gw, pred = grad(loss_fn, has_aux=True)(w, x)
gv, (val, _) = grad_and_value(loss_fn, has_aux=True)(w, x)
def cube(t):
    return t ** 3 + t.sin()
jf = jacfwd(cube)(w)
jr = jacrev(cube)(w)
same = torch.allclose(jf, jr)
per_row = vmap(grad(lambda wi, xi: (xi @ wi) ** 2), in_dims=(None, 0))(w, x)
print(gw, pred, val, same, per_row)
