# ruff: noqa
# Modules called with their tensors by keyword: an in-place module changes what the statement's own
# Sigmoid saved (backward fails), attention takes query=, key=, value=, a forward takes a keyword-only mask.
import torch
from torch import nn
torch.manual_seed(0)
act = nn.ReLU(inplace=True)
x = torch.randn(4, requires_grad=True)
y = act(input=x.sigmoid())
try:
    y.sum().backward()
except RuntimeError as e:
    print("backward failed:", "inplace" in str(e))
h = x * 2
s = h.exp()
z = act(input=h)
z.sum().backward()
mha = nn.MultiheadAttention(4, 2, batch_first=True)
q = torch.randn(1, 3, 4, requires_grad=True)
out, weights = mha(query=q.tanh(), key=q, value=q * 2, need_weights=True)
(out.sum() + weights.sum()).backward()
class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x, *, mask=None):
        out = self.lin(x)
        return out.masked_fill(mask, 0.0)
m = Masked()
mask = torch.tensor([True, False, False, True])
w = m(x.sigmoid(), mask=mask)
r = nn.ReLU(inplace=True)
k = r(input=m(x, mask=mask).sigmoid())
try:
    k.sum().backward()
except RuntimeError as e:
    print("backward failed again:", "inplace" in str(e))
print(x.grad, q.grad, m.lin.weight.grad)
