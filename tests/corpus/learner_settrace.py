# ruff: noqa
# A learner's own trace function sees the calls its program makes, and nothing more.
import sys
import torch
calls = []
def watch(frame, event, arg):
    if event == "call":
        calls.append(frame.f_code.co_name)
    return None
x = torch.tensor([1., 2.], requires_grad=True)
old = sys.gettrace()
sys.settrace(watch)
y = (x * 2).sum()
sys.settrace(old)
print(len(calls), sorted(set(calls)))
