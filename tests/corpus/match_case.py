# ruff: noqa
# Bodies of match cases are steps of their own.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
for kind in ("double", "square", "other"):
    match kind:
        case "double":
            y = x * 2
        case "square":
            y = x ** 2
        case _:
            y = x + 0
