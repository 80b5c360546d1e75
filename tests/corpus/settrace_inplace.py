# ruff: noqa
# A learner's trace function around in-place statements sees only its own calls (torch's Python
# code it calls included), none of the recorder's. (Its own functions are called before: a program's
# sys.settrace blinds the settrace path to new frames, not the sys.monitoring path.)
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
x = torch.tensor([1., -3.])
bump(x)
old = sys.gettrace()
sys.settrace(watch)
torch.nn.functional.relu(x, inplace=True)
x.mul_(2)
sys.settrace(old)  # the line hook that was on (the tracer's, on its settrace path)
del old
print(calls, x)
