# ruff: noqa
# A from-scratch MLP with no nn.Module: a Linear class holding W and b, an MLP holding a list of them, trained by hand.
import torch

torch.manual_seed(0)


class Linear:
    def __init__(self, n_in, n_out):
        self.W = torch.randn(n_in, n_out) * 0.5
        self.W.requires_grad_()
        self.b = torch.zeros(n_out, requires_grad=True)

    def __call__(self, x):
        return x @ self.W + self.b

    def parameters(self):
        return [self.W, self.b]


class MLP:
    def __init__(self, sizes):
        self.layers = [Linear(a, b) for a, b in zip(sizes, sizes[1:])]

    def __call__(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.tanh(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]


net = MLP([2, 3, 1])
X = torch.tensor([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
y = torch.tensor([[1.0], [1.0], [0.0]])
for epoch in range(3):
    loss = ((net(X) - y) ** 2).mean()
    for p in net.parameters():
        p.grad = None
    loss.backward()
    with torch.no_grad():
        for p in net.parameters():
            p -= 0.5 * p.grad
    print(epoch, round(loss.item(), 6))
print(net.layers[0].W)
print(net.layers[1].b.grad)
