# ruff: noqa
# A learner's trace function counts calls while in-place calls run on a tensor subclass with its own
# __torch_function__ (a built-in method and a Python one of torch's): it hears the subclass's handler
# as often as without tracing.
import sys
from collections import Counter
import torch
import torch.nn.functional as F
# (the handler is a lambda: no statement of its own, which the oracle's line hook, replaced by the
# program's trace function, could not follow)
base_handler = torch.Tensor.__torch_function__.__func__
class Logged(torch.Tensor):
    __torch_function__ = classmethod(lambda cls, func, types, args=(), kwargs=None: base_handler(cls, func, types, args, kwargs or {}))
calls = Counter()
def watch(frame, event, arg):
    if event == "call":
        calls[frame.f_code.co_name] += 1
    return None
t = torch.tensor([1., -2., 3.]).as_subclass(Logged)
u = torch.tensor([1., -2., 3.]).as_subclass(Logged)
t.mul_(2)
F.relu(u, inplace=True)
old = sys.gettrace()
sys.settrace(watch)
t.mul_(2)
F.relu(u, inplace=True)
sys.settrace(old)
del old
print(sorted(calls.items()), t, u)
