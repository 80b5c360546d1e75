# ruff: noqa
# Tensor.register_post_accumulate_grad_hook: a step inside backward that changes the parameter.
import torch
w = torch.tensor([1., 2., 3.], requires_grad=True)
log = []
def sgd(p):
    with torch.no_grad():
        p.sub_(0.1 * p.grad)
    log.append(p.grad.clone())
    p.grad = None
h = w.register_post_accumulate_grad_hook(sgd)
for _ in range(3):
    loss = (w * w).sum()
    loss.backward()
h.remove()
print(w, log)
