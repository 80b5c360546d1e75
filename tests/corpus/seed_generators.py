# ruff: noqa
# Random streams: the global seed and a private Generator used side by side.
import torch
torch.manual_seed(7)
a = torch.randn(3)
gen = torch.Generator().manual_seed(7)
b = torch.randn(3, generator=gen)
c = torch.randn(3)
torch.manual_seed(7)
d = torch.randn(3)
perm = torch.randperm(5, generator=gen)
drop = torch.nn.functional.dropout(torch.ones(6), p=0.5)
print(torch.equal(a, b), torch.equal(a, d), c, perm, drop)
state = torch.get_rng_state()
e = torch.rand(2)
torch.set_rng_state(state)
f = torch.rand(2)
print(torch.equal(e, f))
