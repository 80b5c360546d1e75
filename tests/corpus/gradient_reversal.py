# ruff: noqa
# A gradient reversal layer (domain adaptation): a custom Function whose forward is view_as and whose backward flips the sign.
import torch

class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.lambd, None

torch.manual_seed(0)
features = torch.randn(3, 2, requires_grad=True)
w_label = torch.randn(2, requires_grad=True)
w_domain = torch.randn(2, requires_grad=True)
label_loss = (features @ w_label).pow(2).mean()
reversed_features = GradReverse.apply(features, 0.5)
print(reversed_features._base is features, reversed_features.grad_fn.name())
domain_loss = (reversed_features @ w_domain).sigmoid().mean()
(label_loss + domain_loss).backward()
print(features.grad)
print(w_label.grad, w_domain.grad)
