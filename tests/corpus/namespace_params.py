# ruff: noqa
# Parameters kept in a dict and on a plain object's attributes, updated by looping over them.
import torch
torch.manual_seed(0)
params = {"W": torch.randn(2, 3, requires_grad=True), "b": torch.zeros(3, requires_grad=True)}

class Layer:
    def __init__(self, n_in, n_out):
        self.W = torch.randn(n_in, n_out) * 0.5
        self.W.requires_grad_()
        self.b = torch.zeros(n_out, requires_grad=True)
        self.last_out = None

    def __call__(self, x):
        self.last_out = x @ self.W + self.b
        return self.last_out

    def parameters(self):
        return [self.W, self.b]

layer = Layer(3, 1)
x = torch.randn(4, 2)
for step in range(2):
    h = torch.tanh(x @ params["W"] + params["b"])
    out = layer(h)
    loss = out.pow(2).mean()
    loss.backward()
    with torch.no_grad():
        for name, p in params.items():
            p -= 0.1 * p.grad
            p.grad = None
        for p in layer.parameters():
            p -= 0.1 * p.grad
            p.grad.zero_()
    print(step, loss.item(), layer.last_out.grad_fn.name())
print({k: v.shape for k, v in params.items()}, layer.W, layer.b)
