# ruff: noqa
# Walking grad_fn.next_functions by hand to print the graph, as learners do before they find a visualiser.
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([0.5, -1.0], requires_grad=True)
y = (x * w).sum() + torch.exp(x).mean()

def show(fn, depth=0):
    if fn is None:
        return
    print("  " * depth + fn.name())
    if hasattr(fn, "variable"):
        print("  " * depth + "  -> leaf", fn.variable)
    for nxt, _ in fn.next_functions:
        show(nxt, depth + 1)

show(y.grad_fn)
print([n.name() if n is not None else None for n, _ in y.grad_fn.next_functions])
first = y.grad_fn.next_functions[0][0]
print(first.name(), first.next_functions[0][0].name())
print(y.grad_fn._saved_alpha if hasattr(y.grad_fn, "_saved_alpha") else "no alpha")
mul = first.next_functions[0][0]
print(mul._saved_self, mul._saved_other)
y.backward()
print(x.grad, w.grad)
