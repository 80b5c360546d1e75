"""A change is told as made "through a view" only when the tensors really share memory."""

from __future__ import annotations

from gradtrace.model import Mutate, Trace
from gradtrace.run import trace_code

SOURCE = (
    "import torch\n"
    "a = torch.tensor([1., 2., 3.])\n"
    "c = torch.zeros(3)\n"
    "torch.cumsum(a.mul_(2), 0, out=c)\n"
    "v = a[1:]\n"
    "v.add_(1)\n"
)


def _mutates(trace: Trace, line: int) -> dict[str, Mutate]:
    step = next(s for s in trace.steps if s.lineno == line)
    return {e.tensor: e for e in step.events if isinstance(e, Mutate)}


def test_out_write_beside_an_inplace_call_is_no_view_change() -> None:
    trace = trace_code(SOURCE)
    t = trace.steps[-1].bindings
    out = _mutates(trace, 4)
    assert set(out) == {t["a"], t["c"]}  # both changed, as PyTorch's versions say
    assert out[t["a"]].via is None and out[t["c"]].via is None  # c shares no memory with a


def test_a_real_view_write_names_the_view() -> None:
    trace = trace_code(SOURCE)
    t = trace.steps[-1].bindings
    out = _mutates(trace, 6)
    assert out[t["a"]].via == t["v"]
