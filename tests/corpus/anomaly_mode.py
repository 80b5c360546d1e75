# ruff: noqa
# Anomaly detection around a backward that produces NaN.
import torch
x = torch.tensor([0., 1.], requires_grad=True)
y = x.sqrt()
z = (y * 0).sum()
with torch.autograd.detect_anomaly(check_nan=True):
    try:
        w = (x.sqrt()).sum()
        w.backward()
    except RuntimeError as e:
        msg = str(e)[:30]
z.backward()
print(x.grad)
