# ruff: noqa
# A finalizer runs when the last reference goes, as without tracing (grad mode as the program left it).
import weakref
import torch
class Noisy:
    def __init__(self, n):
        self.n = n
    def __del__(self):
        print("bye", self.n, torch.is_grad_enabled())
a = Noisy(1)
a = Noisy(2)
print("after rebind")
t = torch.ones(2)
weakref.finalize(t, print, "tensor freed")
t = torch.zeros(2)
print("after tensor rebind")
del a
print("end")
