# ruff: noqa
# clip_grad_norm_ with norm_type=inf and 1, and clip_grad_value_; returned totals against hand math.
import torch
a = torch.tensor([3.0, -4.0], requires_grad=True)
b = torch.tensor([[1.0, 2.0]], requires_grad=True)
(a * torch.tensor([1.0, 2.0])).sum().backward()
(b * 5).sum().backward()
before = [a.grad.clone(), b.grad.clone()]
total_inf = torch.nn.utils.clip_grad_norm_([a, b], max_norm=2.0, norm_type=float("inf"))
print(total_inf, a.grad, b.grad)
a.grad.copy_(before[0]); b.grad.copy_(before[1])
total_1 = torch.nn.utils.clip_grad_norm_([a, b], max_norm=100.0, norm_type=1)
print(total_1, a.grad)
torch.nn.utils.clip_grad_value_([a, b], clip_value=1.5)
print(a.grad, b.grad)
