"""Small programs whose every view (trace, JSON, text, film, explain, quiz, compare) is compared.

Shared by ``test_explain_ids.py`` (one id and one step numbering in every view) and
``test_explain_no_torch.py`` (the same views rebuilt from JSON with torch absent). Each
entry names the program's output and a tensor whose ``.grad`` a quiz can ask for.
Expected numbers are never typed here: the tests take them from the programs' runs.
"""

from __future__ import annotations

from typing import NamedTuple


class Program(NamedTuple):
    source: str
    output: str  # the tensor ``backward()`` is called on
    ask: str  # what a quiz about it asks for


PROGRAMS: dict[str, Program] = {
    "lesson01": Program("""\
import torch
x = torch.tensor(42., requires_grad=True)
x2 = x ** 2
x3 = x ** 3
f = x2 + x3
f.backward()
""", "f", "x.grad"),
    # an MLP written with plain tensors: matmuls, a broadcast add, relu
    "mlp": Program("""\
import torch
torch.manual_seed(0)
w1 = torch.randn(3, 4, requires_grad=True)
b1 = torch.zeros(4, requires_grad=True)
w2 = torch.randn(4, 1, requires_grad=True)
xs = torch.randn(2, 3)
h = (xs @ w1 + b1).relu()
loss = (h @ w2).pow(2).mean()
loss.backward()
""", "loss", "w2.grad"),
    # the same with modules: nn.Linear makes two nodes in one call (TBackward0, AddmmBackward0)
    "mlp_modules": Program("""\
import torch
torch.manual_seed(0)
lin1 = torch.nn.Linear(3, 4)
net = torch.nn.Sequential(lin1, torch.nn.Tanh(), torch.nn.Linear(4, 2))
xs = torch.randn(2, 3)
loss = net(xs).sigmoid().pow(2).mean()
loss.backward()
""", "loss", "lin1.bias.grad"),
    # many nodes made by one statement
    "one_statement": Program("""\
import torch
a = torch.tensor([1.5, -2., 0.25], requires_grad=True)
b = torch.tensor([0.5, 3., -1.], requires_grad=True)
out = ((a * b).exp() + a / b - b.cos()).sum()
out.backward()
""", "out", "a.grad"),
    # backward() fails on a saved value changed in place
    "stale": Program("""\
import torch
a = torch.tensor([1., 2.], requires_grad=True) * 1
b = a * a
a.add_(1)
b.sum().backward()
""", "b", "a.grad"),
}

#: the programs whose backward() runs to the end
WORKING = tuple(name for name in PROGRAMS if name != "stale")
