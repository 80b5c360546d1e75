# ruff: noqa
# torch.save and torch.load of a state_dict through an in-memory buffer, then load_state_dict into a fresh model and compare.
import io
import torch
torch.manual_seed(0)
model = torch.nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.randn(3, 2)).sum().backward()
opt.step()
buf = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 1}, buf)
buf.seek(0)
ckpt = torch.load(buf)
fresh = torch.nn.Linear(2, 2)
print(torch.equal(fresh.weight, model.weight))
fresh.load_state_dict(ckpt["model"])
print(torch.equal(fresh.weight, model.weight), fresh.weight.requires_grad, ckpt["epoch"])
print(ckpt["model"]["bias"].requires_grad, fresh.weight._version)
