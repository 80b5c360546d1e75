"""A tiny GPT-2-style model for the unfolding tests: groups inside groups (``model.h.0`` holds ``attn``, ``mlp``).

``MODEL`` is source text (a notebook cell runs it as it is; :func:`namespace` runs it here), and
``PROGRAM`` one training step of it, traced by the tests.
"""

from __future__ import annotations

from typing import Any

MODEL = '''\
import math
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.c_attn(x).split(width, dim=2)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        weights = (q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])).softmax(dim=-1)
        return self.c_proj((weights @ v).transpose(1, 2).reshape(batch, length, width))


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
    def __init__(self, vocab=20, width=16, heads=2, layers=2, context=8):
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
'''

PROGRAM = """\
torch.manual_seed(0)
model = TinyGPT()
tokens = torch.randint(0, 20, (2, 7))
logits = model(tokens[:, :-1])
loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1))
loss.backward()
"""


def namespace() -> dict[str, Any]:
    """The model's classes (and torch), as a notebook cell running ``MODEL`` leaves them."""
    ns: dict[str, Any] = {}
    exec(compile(MODEL, "tiny_models_model.py", "exec"), ns)  # noqa: S102 - the tests' own model
    return ns
