# ruff: noqa
# A parametrized weight (weight_norm and a custom parametrization) recomputed on each access.
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P
torch.manual_seed(0)
class Sym(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).t()
lin = nn.Linear(3, 3)
P.register_parametrization(lin, "weight", Sym())
wn = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
x = torch.randn(2, 3)
out = wn(lin(x)).sum()
out.backward()
w = lin.weight
print(w, lin.parametrizations.weight.original.grad)
