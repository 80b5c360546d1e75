# ruff: noqa
# The AMP recipe on CPU: autocast to bfloat16 around the forward, a GradScaler that is disabled, the loss computed in float32.
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", enabled=False)
x = torch.randn(3, 4)
y = torch.randn(3, 1)
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    out = model(x)
    print(out.dtype)
loss = nn.functional.mse_loss(out.float(), y)
scaler.scale(loss).backward()
scaler.step(opt)
scaler.update()
print(loss.dtype, model[0].weight.grad.dtype, model[2].bias.grad)
