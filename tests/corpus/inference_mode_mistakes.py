# ruff: noqa
# inference_mode in an eval loop, then reusing its output in training fails; backward() called inside a no_grad block still works on a graph built outside it.
import torch
torch.manual_seed(0)
model = torch.nn.Linear(2, 2)
x = torch.randn(3, 2)
with torch.inference_mode():
    feats = model(x)
print(feats.requires_grad, feats.is_inference())
try:
    loss = model(feats).sum()
    loss.backward()
except RuntimeError as e:
    print("reusing an inference tensor:", str(e)[:70])
feats2 = feats.clone()
print(feats2.is_inference())
loss = (model(x) * 2).sum()
with torch.no_grad():
    loss.backward()
    print(model.bias.grad)
with torch.no_grad():
    with torch.enable_grad():
        y = (model.weight * 3).sum()
    print(y.requires_grad)
y.backward()
print(model.weight.grad)
