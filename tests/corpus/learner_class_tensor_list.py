# ruff: noqa
# A learner's own model class: weights in a list attribute, a running history list, in-place updates.
import torch
class TinyNet:
    def __init__(self):
        torch.manual_seed(11)
        self.layers = [torch.randn(2, 2, requires_grad=True) for _ in range(2)]
        self.history = []
    def forward(self, x):
        for W in self.layers:
            x = (x @ W).tanh()
        return x
    def step(self, lr):
        with torch.no_grad():
            for W in self.layers:
                W -= lr * W.grad
                W.grad.zero_()
net = TinyNet()
x = torch.tensor([[1.0, 0.5]])
for _ in range(3):
    out = net.forward(x)
    loss = (out - 1).pow(2).sum()
    loss.backward()
    net.history.append(loss.detach())
    net.step(0.1)
print(torch.stack(net.history), net.layers[0])
