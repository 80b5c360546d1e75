# ruff: noqa
# A weak reference to a tensor dies when its last name is deleted or rebound.
import gc
import weakref
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
r = weakref.ref(y)
del y
alive_after_del = r() is not None
z = x * 3
rz = weakref.ref(z)
z = x * 4
alive_after_rebind = rz() is not None
print(alive_after_del, alive_after_rebind)
