# ruff: noqa
# A learner's trace function around in-place statements sees only its own calls.
import sys
import torch
calls = []
def watch(frame, event, arg):
    if event == "call":
        calls.append(frame.f_code.co_name)
    return None
def bump(t):
    t.add_(1)
    return t
x = torch.tensor([1., 2.])
sys.settrace(watch)
bump(x)
x.mul_(2)
sys.settrace(None)
print(calls, x)
