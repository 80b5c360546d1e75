# ruff: noqa
# Truncated backprop through time: h.detach() between chunks, or "Trying to backward through the graph a second time".
import torch
torch.manual_seed(0)
rnn = torch.nn.RNNCell(2, 3)
opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
seq = torch.randn(4, 1, 2)
h = torch.zeros(1, 3)
for chunk in range(2):
    opt.zero_grad()
    loss = 0
    for t in range(2):
        h = rnn(seq[chunk * 2 + t], h)
        loss = loss + h.pow(2).sum()
    loss.backward()
    opt.step()
    print(chunk, loss.item(), h.requires_grad, h.grad_fn.name())
    h = h.detach()
    print(h.requires_grad, h.grad_fn)
h = torch.zeros(1, 3)
try:
    for chunk in range(2):
        loss = 0
        for t in range(2):
            h = rnn(seq[chunk * 2 + t], h)
            loss = loss + h.pow(2).sum()
        loss.backward()
except RuntimeError as e:
    print("without detach, chunk", chunk, ":", str(e)[:50])
