# ruff: noqa
# The tutorial's custom ReLU: a torch.autograd.Function with ctx.save_for_backward, used in a two-layer net trained by hand.
import torch

class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input

torch.manual_seed(13)
x = torch.randn(8, 4)
y = torch.randn(8, 2)
w1 = torch.randn(4, 5, requires_grad=True)
w2 = torch.randn(5, 2, requires_grad=True)
relu = MyReLU.apply
for t in range(4):
    y_pred = relu(x.mm(w1)).mm(w2)
    loss = (y_pred - y).pow(2).sum()
    print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        w1 -= 1e-3 * w1.grad
        w2 -= 1e-3 * w2.grad
        w1.grad.zero_()
        w2.grad.zero_()
print(y_pred.grad_fn.next_functions[0][0].name())
