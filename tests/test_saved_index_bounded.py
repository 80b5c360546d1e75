"""The saved-value index forgets graphs that died (issue 9, Speed; work and entries counted, never timed).

A loop that builds a graph each iteration and drops it, with or without ``backward()``, must not
grow the tracer's index of saved values (which tensor each node saved, which storage each saved
value lives in): it stays about the size of the graphs still alive. A storage address a dead
node's saved value was filed under may be handed to a new tensor: a write there reads nothing
for the dead node.
"""

from __future__ import annotations

import pytest
import torch

from gradtrace.tracer.graph import GraphBook
from gradtrace.tracer.ids import Ids
from gradtrace.tracer.saved import _SWEEP_MIN

from tracer_runs import _run


def _loop(n: int, backward: bool) -> str:
    body = "    y = (x * 2).exp().sigmoid()\n    z = y[0] * x.sin().cos()\n"
    if backward:
        body += "    z.sum().backward()\n"
    return f"import torch\nx = torch.ones(3, requires_grad=True)\nfor i in range({n}):\n{body}"


def _entries(book: GraphBook) -> dict[str, int]:
    return {
        "saved_by": sum(map(len, book.saved_by.values())),
        "storages": sum(map(len, book.untracked.values())),
        "filed": len(book._filed),
        "no_id": len(book._no_id),
        "stale": len(book.stale),
    }


@pytest.mark.parametrize("backward", [False, True], ids=["dropped", "after_backward"])
def test_graphs_a_loop_drops_leave_no_index_entries(backward: bool) -> None:
    _trace, few, _ns = _run(_loop(3, backward))
    _trace, many, _ns = _run(_loop(600, backward))
    grown = _entries(many.book)
    # while the loop runs, the index is swept as it doubles: bounded, whatever the iterations
    assert sum(grown.values()) <= 4 * _SWEEP_MIN, grown
    # swept now, it holds the live graphs only: the last iteration's, as after three iterations
    few.book.sweep()
    many.book.sweep()
    assert _entries(many.book) == _entries(few.book)


def test_a_write_at_a_dead_saved_values_address_reads_nothing_for_it() -> None:
    # the address a dead node's saved value was filed under is written (a new tensor got that memory, which
    # the allocator does when it likes): the read for saved values changed there walks no live graph
    x = torch.ones(64, requires_grad=True)
    book = GraphBook(Ids())
    h = x
    for _ in range(150):  # a live graph, made first: none of its memory can be the dead value's
        h = h * 1.0001
    book.walk(h.grad_fn, output=h)
    z = x.sin().cos()  # CosBackward0 saves sin's output, a value no name holds: filed by its storage
    book.walk(z.grad_fn, output=z)
    cos = book.ids.node(z.grad_fn)
    assert cos is not None
    book.done()  # the step is taken: the book holds no tensor
    (addr,) = book._filed[cos]
    del z
    book.touched([])
    book.dirty = {addr}
    assert book.check_untracked([h.grad_fn], [addr]) == []
    assert book.work["untracked"] == 0
    assert addr not in book.untracked
