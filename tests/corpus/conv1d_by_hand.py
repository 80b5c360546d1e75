# ruff: noqa
# A 1-D convolution written with unfold, compared with F.conv1d, forward and backward.
import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(1, 1, 6)
k = torch.randn(1, 1, 3, requires_grad=True)
ref = F.conv1d(x, k)
ref.sum().backward()
gk = k.grad.clone()
k.grad = None
windows = x[0, 0].unfold(0, 3, 1)
mine = windows @ k[0, 0]
mine.sum().backward()
print(torch.allclose(ref.flatten(), mine), torch.allclose(gk, k.grad))
