# ruff: noqa
# In-place calls on views between random draws: the draws after them are those of the plain run
# (the tracer's stand-in calls draw nothing); dropout's write to b[1] bumps the version b[0]'s
# saved sigmoid result was saved at, so backward fails.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
b = w * 2
a = b.reshape(-1)
a.mul_(torch.rand(6))
print(torch.rand(2))
b[0].sigmoid_()
torch.nn.functional.dropout(b[1], 0.5, True, True)
print(torch.rand(2))
try:
    b.backward(gradient=torch.ones_like(b))
except RuntimeError as e:  # sigmoid_ saved b[0], which dropout's write to b[1] changed (one version counter)
    print("inplace" in str(e))
