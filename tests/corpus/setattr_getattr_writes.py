# ruff: noqa
# Writes made through setattr and getattr, with no attribute or in-place name in the statement's text:
# setattr(w, "data", ...) gives w new values behind its version counter, setattr(w, "grad", None) drops
# its gradient, and an in-place method looked up on the class by name changes a saved result.
import torch
w = torch.tensor([1., 2.], requires_grad=True)
setattr(w, "data", torch.tensor([5., 6.]))
y = (w * w).sum()
y.backward()
setattr(w, "grad", None)
op = getattr(torch.Tensor, "add_")
z = w.exp()
op(z, 1)
try:
    z.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
print(w, w.grad)
