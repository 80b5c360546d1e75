"""The forum's answer: name every tensor (temp0, temp1) and the graph is the original one.

Re-binding x changes no tensor and no graph: x3 and f are built from temp0 and
temp1, so f = temp0**2 + temp0**3 and temp0.grad = 2*42 + 3*42**2 = 5376.
"""
import torch

x = temp0 = torch.tensor(42., requires_grad=True)
x = temp1 = temp0 ** 2
x3 = temp0 ** 3
f = temp1 + x3
f.backward(retain_graph=False)
print(temp0.grad)
