# ruff: noqa
# An in-place call on a view the program then lets go of: the view dies when the program drops it,
# traced as plainly (a weak reference and gc.collect tell), and the graph still fails on its saved value.
import gc
import weakref
import torch
torch.manual_seed(0)
w = torch.randn(6, requires_grad=True)
b = w * 2
v = b[0:3]
r = weakref.ref(v)
v.sigmoid_()
del v
print("view alive:", r() is not None)
gc.collect()
print("after collect:", r() is not None)
b.add_(1)
try:
    b.backward(gradient=torch.ones_like(b))
except RuntimeError as e:
    print("inplace" in str(e))
