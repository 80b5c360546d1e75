# ruff: noqa
# A custom linear Function from the extending-autograd docs: ctx.needs_input_grad decides which gradients to compute; once_differentiable.
import torch
from torch.autograd.function import once_differentiable

class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        print("needs:", ctx.needs_input_grad)
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias

torch.manual_seed(32)
x = torch.randn(3, 4)
W = torch.randn(2, 4, requires_grad=True)
b = torch.randn(2, requires_grad=True)
out = LinearFunction.apply(x, W, b)
out.sum().backward()
print(W.grad, b.grad)
ref = torch.nn.functional.linear(x, W, b)
print(torch.allclose(out, ref))
print(torch.autograd.gradcheck(LinearFunction.apply, (x.double(), W.double().detach().requires_grad_(), b.double().detach().requires_grad_())))
