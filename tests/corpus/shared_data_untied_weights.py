# ruff: noqa
# "Tying" weights by sharing .data instead of the Parameter: both modules read one storage, the optimizer moves only one Parameter object but the other's values follow.
import torch
import torch.nn as nn
torch.manual_seed(34)
emb = nn.Embedding(5, 3)
dec = nn.Linear(3, 5, bias=False)
dec.weight.data = emb.weight.data
print(dec.weight is emb.weight, dec.weight.data_ptr() == emb.weight.data_ptr())
opt = torch.optim.SGD(emb.parameters(), lr=0.5)
tokens = torch.tensor([1, 3])
for step in range(2):
    opt.zero_grad()
    logits = dec(emb(tokens))
    loss = nn.functional.cross_entropy(logits, tokens)
    loss.backward()
    opt.step()
    print(step, loss.item(), emb.weight._version, dec.weight._version)
print(dec.weight[1], emb.weight[1], dec.weight.grad is None)
