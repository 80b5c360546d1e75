# ruff: noqa
# Forward-mode AD through an nn.Linear with dual parameters via functional_call.
import torch
import torch.autograd.forward_ad as fwAD
from torch import nn
from torch.func import functional_call
torch.manual_seed(0)
lin = nn.Linear(3, 2)
x = torch.randn(4, 3)
params = {name: p.detach() for name, p in lin.named_parameters()}
tangents = {name: torch.ones_like(p) for name, p in params.items()}
with fwAD.dual_level():
    duals = {name: fwAD.make_dual(params[name], tangents[name]) for name in params}
    out = functional_call(lin, duals, (x,))
    primal, jvp_out = fwAD.unpack_dual(out)
    primal = primal.clone()
    jvp_out = jvp_out.clone()
expected = x.sum(1, keepdim=True).expand(4, 2) + 1
print(torch.allclose(jvp_out, expected), primal.shape)
