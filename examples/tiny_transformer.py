"""A tiny GPT-2-style language model, one training step.

Written in plain ``torch.nn`` with GPT-2's module names (wte, wpe, h.0.ln_1,
h.0.attn.c_attn, h.0.mlp.c_fc, ln_f, lm_head), so its folded picture groups
the graph into the blocks a transformer is made of. Two layers, width 32, a
vocabulary of 50 tokens: small enough to trace in a second.
"""
import math

import torch
from torch import nn


class Attention(nn.Module):
    """Causal self-attention: one linear map makes queries, keys and values."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.c_attn(x).split(width, dim=2)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        mask = torch.ones(length, length, dtype=torch.bool).tril()
        weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(batch, length, width)
        return self.c_proj(out)


class MLP(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.c_fc = nn.Linear(width, 4 * width)
        self.act = nn.GELU()
        self.c_proj = nn.Linear(4 * width, width)

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = Attention(width, heads)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = MLP(width)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab=50, width=32, heads=2, layers=2, context=16):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(context, width)
        self.h = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)

    def forward(self, tokens):
        x = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1]))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


torch.manual_seed(0)
model = TinyGPT()
tokens = torch.randint(0, 50, (2, 9))
logits = model(tokens[:, :-1])
loss = nn.functional.cross_entropy(logits.reshape(-1, 50), tokens[:, 1:].reshape(-1))
loss.backward()
print(loss.grad_fn.name(), tuple(model.h[0].attn.c_attn.weight.grad.shape))
