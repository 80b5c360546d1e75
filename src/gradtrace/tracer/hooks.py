"""What the recorder calls on the tracer while a statement runs (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

A call that makes a node has it read at once (:meth:`NodeHooks.new_node`), before
the statement can change what it saved in place; a write through a view has the
node hidden inside ``CopySlices`` read (:meth:`NodeHooks.view_write`); a backward
call gets hooks on its nodes (:meth:`NodeHooks.watch_backward`, see :mod:`.watch`).
Each runs with gc, grad mode and (on Python 3.11) the line hook off, and puts them
back however it ends: :attr:`NodeHooks.undo` holds what to put back, also for the
tracer's own step.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

import torch

from .copyslices import ViewWrite, view_write
from .driver import _real_gettrace, _real_settrace
from .graph import GraphBook, grad_fn_of
from .ids import Ids
from .quiet import quiet
from .recorder import Recorder
from .watch import MAX_WATCHED_CALLS, BackwardCall, watch_nodes

#: Python 3.11 and before: the line hook is a sys.settrace function, which sees every call (see new_node)
_SETTRACE_LINES = sys.version_info < (3, 12)


class NodeHooks:
    """The graph book's readers the recorder calls (one per trace)."""

    def __init__(self, ids: Ids, book: GraphBook, recorder: Recorder) -> None:
        self.ids, self.book, self.recorder = ids, book, recorder
        #: gc, grad mode and line hook to put back when an interrupt cuts our own putting-back short
        self.undo: tuple[bool, bool, Any] | None = None
        self._watched_calls = 0

    def put_back(self) -> None:
        """Grad mode, gc and the line hook as they were before our own code changed them."""
        undo, self.undo = self.undo, None
        if undo is None:
            return
        collecting, grad_mode, hook = undo
        torch._C._set_grad_enabled(grad_mode)
        if collecting:
            gc.enable()
        if hook is not None and _real_gettrace() is None:
            _real_settrace(hook)

    def new_node(self, out: torch.Tensor, module: str) -> None:
        """A call just made ``out`` and its node: read what the node saved, now, before the
        statement can change it in place (``x.exp().add_(1)``), and note hook-packed values."""
        if self.recorder.in_backward:
            return
        # called while the line hook still sees every call (Python 3.11): it is switched off first, so
        # that none of our own calls goes through it (on 3.12+ switching it costs more than it saves)
        # (the interpreter's own settrace and gettrace: the program's stand-ins pass gradtrace's calls on to them)
        hook = _real_gettrace() if _SETTRACE_LINES else None
        self.undo = (gc.isenabled(), torch.is_grad_enabled(), hook)
        try:  # an interrupt between the putting-back calls below: see :meth:`.session.Tracer.on_statement`
            if hook is not None:
                _real_settrace(None)
            self._read_new_node(out, module)
        except BaseException:
            self.put_back()
            raise

    def view_write(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], before: ViewWrite,
                   module: Any = None) -> None:
        """A call on a view returned: what the node it hid inside ``CopySlices`` saved (see
        :func:`.copyslices.view_write`), with the line hook off as in :meth:`new_node`."""
        if self.recorder.in_backward:
            return
        hook = _real_gettrace() if _SETTRACE_LINES else None
        self.undo = (gc.isenabled(), torch.is_grad_enabled(), hook)
        try:  # an interrupt between the putting-back calls: see :meth:`.session.Tracer.on_statement`
            if hook is not None:
                _real_settrace(None)
            with quiet():
                view_write(self.book, func, args, kwargs, before, module)
            if hook is not None:
                _real_settrace(hook)
            self.undo = None
        except BaseException:
            self.put_back()
            raise

    def _read_new_node(self, out: torch.Tensor, module: str, fn: Any = None) -> None:
        """Walk the new nodes behind ``out`` (``fn``: its grad_fn, when read), with gc, grad mode and the
        line hook off, once for all the nodes the walk finds; nothing when its node was read already
        (a module's input, an output walked from another)."""
        collecting, grad_mode, hook = self.undo or (gc.isenabled(), torch.is_grad_enabled(), None)
        try:
            with quiet():  # the learner's subclass or mode sees none of our reads
                if fn is None:
                    try:
                        fn = out.grad_fn
                    except RuntimeError:  # see graph.grad_fn_of
                        fn = None
                if fn is not None and self.ids.node(fn) is None:
                    packed = torch._C._autograd._top_saved_tensors_default_hooks(False) is not None
                    gc.disable()  # as in a snapshot: small acyclic records, and a collection would walk the whole trace
                    torch._C._set_grad_enabled(False)
                    self.book.walk(fn, output=out, module=module, packed=packed)
        finally:
            torch._C._set_grad_enabled(grad_mode)
            if collecting:
                gc.enable()
            if hook is not None:
                _real_settrace(hook)
            self.undo = None

    def watch_backward(self, call: BackwardCall) -> list[Any] | None:
        """A backward call starts: hooks on its nodes (see :mod:`.watch`); None when not watched."""
        self._watched_calls += 1
        if self._watched_calls > MAX_WATCHED_CALLS:
            return None
        collecting = gc.isenabled()
        try:
            with quiet():
                gc.disable()
                for _name, out, module in self.recorder.ops:  # this statement's nodes first, in creation order
                    self.book.walk(grad_fn_of(out), output=out, module=module)
                fns = [grad_fn_of(r) for r in call.roots]
                for root, fn in zip(call.roots, fns, strict=True):
                    self.book.walk(fn, output=root)
                return watch_nodes(fns, self.ids, call.flow)
        except Exception:  # watching is best effort: the call itself must run as written
            return None
        finally:
            if collecting:
                gc.enable()

    def backwards(self) -> list[tuple[Any, list[tuple[str, str]]]]:
        """The statement's backward calls, their roots' graphs walked, each with the saved values it freed."""
        found = []
        for call in self.recorder.backwards:
            freed: list[tuple[str, str]] = []
            for root in call.roots:
                fn = grad_fn_of(root)
                if fn is not None:
                    self.book.walk(fn, output=root)
                    if not call.retain_graph:  # a watched call's hooks told which nodes ran: only those freed
                        freed += self.book.refresh_freed(fn, {f.node for f in call.flow} if call.flow else None)
            found.append((call, freed))
        return found
