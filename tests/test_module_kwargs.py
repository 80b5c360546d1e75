"""A module's tensors passed by keyword are seen as when passed by position (issue 9, invariant 2).

``module(input=t)``, ``attn(query=q, key=k, value=v)`` and ``forward(self, x, *, mask)`` hand the
forward its tensors by keyword. The trace of such a program must say what the same program with
the tensors passed by position says: the same nodes, made in the same module, the same in-place
changes with the same op, the same saved values' states and predictions. The program's own
module hooks must see what they see without gradtrace, as often.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from regressions.fidelity import check_fidelity

import gradtrace

HEAD = "import torch\nfrom torch import nn\ntorch.manual_seed(0)\nx = torch.randn(4, requires_grad=True)\n"

#: name -> (the program with tensors by position, the same program with them by keyword)
PAIRS = {
    # the in-place module changes a tensor named before: the mutation's op is the module's
    "inplace_named": ("act = nn.ReLU(inplace=True)\nh = x * 2\ns = h.exp()\nz = act(h)\n",
                      "act = nn.ReLU(inplace=True)\nh = x * 2\ns = h.exp()\nz = act(input=h)\n"),
    # the node the statement made before the module ran is the caller's, not the module's
    "caller_node": ("lin = nn.Linear(4, 2)\ny = lin(x * 2)\n",
                    "lin = nn.Linear(4, 2)\ny = lin(input=x * 2)\n"),
    # Sigmoid saved its result, the in-place module changes it in the same statement: stale, predicted
    "same_statement_stale": ("act = nn.ReLU(inplace=True)\ny = act(x.sigmoid())\n",
                             "act = nn.ReLU(inplace=True)\ny = act(input=x.sigmoid())\n"),
    "attention": ("mha = nn.MultiheadAttention(4, 2, batch_first=True)\nq = x.view(1, 1, 4)\n"
                  "out, w = mha(q.tanh(), q * 2, q.exp())\n",
                  "mha = nn.MultiheadAttention(4, 2, batch_first=True)\nq = x.view(1, 1, 4)\n"
                  "out, w = mha(query=q.tanh(), key=q * 2, value=q.exp())\n"),
    # a keyword-only argument of the program's own forward: its node is read as the call begins
    "keyword_only": ("class M(nn.Module):\n    def forward(self, x, mask):\n        return x * mask\n"
                     "m = M()\nw = torch.ones(4, requires_grad=True)\ny = m(x.sigmoid(), w.exp())\n",
                     "class M(nn.Module):\n    def forward(self, x, *, mask):\n        return x * mask\n"
                     "m = M()\nw = torch.ones(4, requires_grad=True)\ny = m(x.sigmoid(), mask=w.exp())\n"),
}


def _without_text(value: Any) -> Any:
    """The trace as plain data, without the program's text (the two programs differ only there)."""
    if isinstance(value, dict):
        return {k: _without_text(v) for k, v in value.items() if k not in ("code", "source")}
    if isinstance(value, list):
        return [_without_text(v) for v in value]
    return value


def _trace(source: str) -> Any:
    return json.loads(gradtrace.trace_code(HEAD + source, {}, raise_errors=False).to_json())


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_tensors_by_keyword_are_seen_as_by_position(name: str) -> None:
    positional, keyword = PAIRS[name]
    by_position, by_keyword = _trace(positional), _trace(keyword)
    assert len(by_position["steps"]) == len(by_keyword["steps"])
    for i, (a, b) in enumerate(zip(by_position["steps"], by_keyword["steps"], strict=True)):
        assert _without_text(b) == _without_text(a), f"step {i} ({b['code']!r}) differs from {a['code']!r}"
    assert _without_text(by_keyword) == _without_text(by_position)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_keyword_programs_keep_the_invariants(name: str) -> None:
    check_fidelity(HEAD + PAIRS[name][1])


HOOKS = HEAD + (
    "from torch.nn.modules import module as nn_module\n"
    "log = []\n"
    "def pre(mod, args):\n"
    "    log.append(('global pre', type(mod).__name__, len(args)))\n"
    "def post(mod, args, out):\n"
    "    log.append(('global post', type(mod).__name__))\n"
    "def pre_kw(mod, args, kwargs):\n"
    "    log.append(('pre kw', sorted(kwargs)))\n"
    "    return args, {**kwargs, 'input': kwargs['input'] * 2}\n"
    "def post_kw(mod, args, kwargs, out):\n"
    "    log.append(('post kw', sorted(kwargs), float(kwargs['input'].sum())))\n"
    "g1 = nn_module.register_module_forward_pre_hook(pre)\n"
    "g2 = nn_module.register_module_forward_hook(post)\n"
    "act = nn.ReLU(inplace=True)\n"
    "h1 = act.register_forward_pre_hook(pre_kw, with_kwargs=True)\n"
    "h2 = act.register_forward_hook(post_kw, with_kwargs=True)\n"
    "y = act(input=x.sigmoid())\n"
    "z = act(input=x * 3)\n"
    "for h in (g1, g2, h1, h2):\n"
    "    h.remove()\n"
    "print(log)\n"
    "print(y, z)\n"
)


def test_the_programs_own_module_hooks_run_once_and_see_the_same_keywords() -> None:
    check_fidelity(HOOKS)
