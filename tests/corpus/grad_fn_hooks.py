# ruff: noqa
# Hooks on grad_fn nodes (register_hook, register_prehook) and a multi-grad hook.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([3., 4.], requires_grad=True)
y = x * w
seen = []
y.grad_fn.register_prehook(lambda gout: (gout[0] * 2,))
y.grad_fn.register_hook(lambda gin, gout: seen.append(len(gin)))
h = torch.autograd.graph.register_multi_grad_hook((x, w), lambda grads: seen.append(sum(g is not None for g in grads)))
s = y.sum()
s.backward()
h.remove()
print(seen, x.grad, w.grad)
