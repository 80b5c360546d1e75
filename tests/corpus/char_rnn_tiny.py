# ruff: noqa
# A tiny character RNN written with raw weight matrices: one-hot inputs, a loop over time, clipped gradients, an Adagrad-like update by hand.
import torch
torch.manual_seed(0)
data = "helo"
chars = sorted(set(data))
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for ch, i in stoi.items()}
V, H = len(chars), 5
Wxh = (torch.randn(V, H) * 0.1).requires_grad_()
Whh = (torch.randn(H, H) * 0.1).requires_grad_()
Why = (torch.randn(H, V) * 0.1).requires_grad_()
bh = torch.zeros(H, requires_grad=True)
by = torch.zeros(V, requires_grad=True)
params = [Wxh, Whh, Why, bh, by]
mem = [torch.zeros_like(p) for p in params]
inputs = [stoi[c] for c in data[:-1]]
targets = torch.tensor([stoi[c] for c in data[1:]])
for it in range(1):
    h = torch.zeros(1, H)
    logits = []
    for t, ix in enumerate(inputs):
        x = torch.nn.functional.one_hot(torch.tensor([ix]), V).float()
        h = torch.tanh(x @ Wxh + h @ Whh + bh)
        logits.append(h @ Why + by)
    loss = torch.nn.functional.cross_entropy(torch.cat(logits), targets)
    for p in params:
        p.grad = None
    loss.backward()
    with torch.no_grad():
        for p, m in zip(params, mem):
            p.grad.clamp_(-5, 5)
            m += p.grad * p.grad
            p -= 0.1 * p.grad / torch.sqrt(m + 1e-8)
    print(it, round(loss.item(), 4))
with torch.no_grad():
    h = torch.zeros(1, H)
    ix = stoi["h"]
    out = "h"
    for _ in range(2):
        x = torch.nn.functional.one_hot(torch.tensor([ix]), V).float()
        h = torch.tanh(x @ Wxh + h @ Whh + bh)
        ix = int((h @ Why + by).argmax())
        out += itos[ix]
print(out)
