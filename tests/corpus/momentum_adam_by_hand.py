# ruff: noqa
# SGD with momentum and Adam written by hand over a list of state tensors, checked against torch.optim after three steps.
import torch
torch.manual_seed(0)
X = torch.randn(5, 2)
y = torch.randn(5)
w0 = torch.randn(2)

def loss_of(w):
    return ((X @ w - y) ** 2).mean()

w = w0.clone().requires_grad_()
velocity = torch.zeros_like(w)
for step in range(2):
    loss = loss_of(w)
    loss.backward()
    with torch.no_grad():
        velocity.mul_(0.9).add_(w.grad)
        w.sub_(0.1 * velocity)
    w.grad.zero_()
ref = torch.nn.Parameter(w0.clone())
opt = torch.optim.SGD([ref], lr=0.1, momentum=0.9)
for step in range(2):
    opt.zero_grad()
    loss_of(ref).backward()
    opt.step()
print("momentum", w.detach(), ref.detach(), torch.allclose(w, ref))

v = w0.clone().requires_grad_()
m = torch.zeros_like(v)
s = torch.zeros_like(v)
beta1, beta2, lr, eps = 0.9, 0.999, 0.05, 1e-8
for t in range(1, 3):
    loss = loss_of(v)
    v.grad = None
    loss.backward()
    with torch.no_grad():
        m = beta1 * m + (1 - beta1) * v.grad
        s = beta2 * s + (1 - beta2) * v.grad ** 2
        m_hat = m / (1 - beta1 ** t)
        s_hat = s / (1 - beta2 ** t)
        v -= lr * m_hat / (s_hat.sqrt() + eps)
ref2 = torch.nn.Parameter(w0.clone())
adam = torch.optim.Adam([ref2], lr=0.05)
for t in range(2):
    adam.zero_grad()
    loss_of(ref2).backward()
    adam.step()
print("adam", v.detach(), ref2.detach(), (v - ref2).abs().max().item())
