# ruff: noqa
# A micrograd-style engine over tensors: each Value keeps its children and a _backward closure, checked against autograd.
import torch

class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = torch.zeros_like(data)
        self._backward = lambda: None
        self._prev = _children  # a tuple: a set of objects would iterate in a different order each run
        self._op = _op

    def __add__(self, other):
        out = Value(self.data + other.data, (self, other), '+')
        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other), '*')
        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = torch.tanh(self.data)
        out = Value(t, (self,), 'tanh')
        def _backward():
            self.grad += (1 - t ** 2) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()
        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = torch.ones_like(self.data)
        for v in reversed(topo):
            v._backward()

a = Value(torch.tensor([2.0, -1.0]))
b = Value(torch.tensor([-3.0, 0.5]))
c = Value(torch.tensor([10.0, 1.0]))
e = a * b
d = e + c
f = d.tanh() * a
f.backward()
print(a.grad, b.grad, c.grad)

at = torch.tensor([2.0, -1.0], requires_grad=True)
bt = torch.tensor([-3.0, 0.5], requires_grad=True)
ct = torch.tensor([10.0, 1.0], requires_grad=True)
ft = torch.tanh(at * bt + ct) * at
ft.backward(torch.ones(2))
print(at.grad, bt.grad, ct.grad)
print(torch.allclose(a.grad, at.grad), torch.allclose(b.grad, bt.grad))
