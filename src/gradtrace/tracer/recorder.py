"""Watching what a statement does to tensors (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

Most statements run with no torch function mode at all: the recorder hears
``backward()``/``autograd.grad`` from the run driver (their code objects' frames
start and end, see :mod:`.watch`), and each module's forward through global
module hooks (the outputs and their nodes, the module path, in-place changes of
its inputs, its buffers). New nodes of plain calls are found from the names at
the statement's end.

A statement whose text can change a value its own calls saved, or write behind
the version counter (``x.exp().add_(1)``, ``out=``, ``inplace=True``, ``+=``,
``t[i] = ...``, ``t.grad = ...``, ``t.numpy()``, ``detach``, ``getattr``/``setattr``), one that calls
a bare name holding an in-place call (``f = a.mul_`` then ``f(c)``: :func:`.statement_text.calls_in_place`), or one
that starts under ``no_grad``/``inference_mode``/saved-tensor hooks, runs with the recorder
pushed as a :class:`torch.overrides.TorchFunctionMode` (:func:`.statement_text.needs_mode`): it
sees every torch call with its inputs and output and keeps, in creation order,
the outputs that carry a new node, the in-place calls, the tensors made outside
the graph. It passes every call through unchanged.
"""

from __future__ import annotations

import sys
import threading
import types
import weakref
from collections.abc import Callable, Sequence, Sized
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from .copyslices import ViewWrite, view_write_before
from .graph import grad_fn_of, version_of
from .stack import ensure_deep_stack
from .statement_text import _inplace_name
from .watch import BACKWARD_CODES, BackwardCall, backward_call

_SHARES_MEMORY = frozenset({"numpy", "__array__"})
_PASS = frozenset({"__get__", "__set__", "__delete__", "_set_grad_enabled", "__repr__", "__format__"})
#: calls that change a tensor's flags or ``.grad`` and leave its version alone
_FLAGS = frozenset({"__set__", "__delete__", "retain_grad"})


def _is_backward(func: Any) -> bool:
    return getattr(func, "__code__", None) in BACKWARD_CODES


_FunctionType = types.FunctionType
_Tensor = torch.Tensor
_DisableTorchFunction = torch._C.DisableTorchFunction
_ref = weakref.ref
_get_ident = threading.get_ident
_NormBase = torch.nn.modules.batchnorm._NormBase
#: a tensor whose ``grad_fn`` could not be read
_NO_NODE = object()
_DISPATCHER = torch.overrides.handle_torch_function.__code__
_ORIGINALS: dict[types.CodeType, Any] = {}
_getframe = sys._getframe


def _call_impl_inner() -> types.CodeType | None:
    """The code of the function in ``Module._call_impl`` that runs the global forward hooks.

    A global forward pre-hook is given the positional arguments only (torch offers no keyword
    form of it); the keyword arguments are the ``kwargs`` of the frame that calls the hook.
    """
    code = getattr(torch.nn.Module._call_impl, "__code__", None)
    for const in () if code is None else code.co_consts:
        if isinstance(const, types.CodeType) and "kwargs" in const.co_freevars:
            return const
    return None


_HOOKS_CODE = _call_impl_inner()


def original_of(func: Any) -> Any:
    """The torch function whose body handed this call to the mode, when the learner replaced it.

    A Python-level torch function (``Tensor.backward``, ``F.relu``) hands a call to the
    mode by the name it is published under. After ``torch.Tensor.backward = wrapper``,
    that name is the learner's wrapper, which already ran: calling it again would run
    it twice. The function whose frame called the dispatcher is the one to run.
    """
    code = getattr(func, "__code__", None)
    if code is None:
        return func
    frame: types.FrameType | None = sys._getframe(2)
    for _ in range(4):
        if frame is None or frame.f_code is _DISPATCHER:
            break
        frame = frame.f_back
    if frame is None or frame.f_code is not _DISPATCHER or frame.f_back is None:
        return _tensor_method(func)
    caller = frame.f_back.f_code
    if caller is code:
        return func
    original = _ORIGINALS.get(caller)
    if original is None:
        import gc

        found = [r for r in gc.get_referrers(caller) if isinstance(r, types.FunctionType) and r.__code__ is caller]
        if not found:
            return func
        original = _ORIGINALS[caller] = found[0]
    return original


#: Tensor's attributes as torch made them, before a program can replace one
_TENSOR_ATTRS = dict(vars(torch.Tensor))


def _tensor_method(func: Any) -> Any:
    """The method torch made, when ``func`` is a program's replacement of a Tensor method.

    A built-in method (``Tensor.exp``) hands a call to the mode by looking its name up on
    the class, which finds the program's wrapper: that wrapper already ran.
    """
    for name, value in list(vars(torch.Tensor).items()):
        if value is func:
            original = _TENSOR_ATTRS.get(name)
            if original is None or original is func:
                original = getattr(torch._C.TensorBase, name, None)
            if original is None or original is func:
                return func
            return original
    return func


def _template() -> types.CodeType:
    ns: dict[str, Any] = {}
    exec(compile("def _t(f, a, k):\n    return f(*a, **k)\n", "<gradtrace>", "exec"), ns)
    code: types.CodeType = ns["_t"].__code__
    return code


_TEMPLATE = _template()


class _AsCaller:
    """Calls a built-in torch function from a frame that looks like its caller's.

    PyTorch's C++ warnings (``.grad`` of a non-leaf, ...) point at the innermost
    Python frame. Without gradtrace that is the learner's line; with a torch
    function mode it would be the mode's own line, so the learner saw gradtrace's
    file, and Python's once-per-location filter hid the warning on every later
    line and run. The call is made from a one-line function whose code claims the
    caller's file and line and whose globals are the caller's (so the warning
    registry is theirs too). Its name starts with ``<`` so the tracer skips it.
    """

    def __init__(self) -> None:
        self._codes: dict[tuple[str, int], types.CodeType] = {}

    def __call__(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if isinstance(func, types.FunctionType):
            return func(*args, **kwargs)  # Python code: its own frame is the innermost one already
        caller = sys._getframe(2)
        code = caller.f_code
        key = (code.co_filename, caller.f_lineno or 1)
        tramp = self._codes.get(key)
        if tramp is None:
            names: dict[str, Any] = {"co_name": "<torch call>"}
            if sys.version_info >= (3, 11):
                names["co_qualname"] = "<torch call>"
            tramp = _TEMPLATE.replace(co_filename=key[0], co_firstlineno=key[1] - 1, **names)
            self._codes[key] = tramp
        try:
            return types.FunctionType(tramp, caller.f_globals)(func, args, kwargs)
        except BaseException as exc:  # the call's own error: re-raised without the stand-in frame
            tb = exc.__traceback__
            while tb is not None and tb.tb_next is not None:
                if tb.tb_next.tb_frame.f_code is tramp:
                    tb.tb_next = tb.tb_next.tb_next
                tb = tb.tb_next
            raise


def _base_of(t: torch.Tensor) -> tuple[torch.Tensor, Any] | None:
    """A view's base and the base's node now (a change through the view changes both), or None."""
    base = t._base
    if base is None:
        return None
    try:
        return base, base.grad_fn
    except Exception:  # see graph.grad_fn_of
        return base, _NO_NODE


def _inplace_op(t: torch.Tensor) -> str:
    """``add_`` for a tensor whose node is now ``AddBackward0``: the name of the in-place call that made it."""
    fn = grad_fn_of(t)
    name = "" if fn is None else type(fn).__name__
    base = name.split("Backward", 1)[0]
    if not base or base == name:
        return "in-place call"
    return base.lower() + "_"


#: a call's first argument as the call began: its version, node, and its base with the base's node
_Was = tuple[int, Any, "tuple[torch.Tensor, Any] | None"]


def _tensors(x: Any) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for t in x if isinstance(t, torch.Tensor)]
    if isinstance(x, dict):
        return [t for t in x.values() if isinstance(t, torch.Tensor)]
    return []


#: the containers a module's tensor inputs are looked for in (exact types: reading them runs no program code)
_HOLDERS = frozenset({list, tuple, dict})


def _unpacked(items: Any) -> list[Any]:
    """``items`` with each list, tuple or dict among them replaced by what it holds (one level)."""
    out: list[Any] = []
    for a in items:
        kind = type(a)
        if kind is dict:
            out += a.values()
        elif kind in _HOLDERS:
            out += a
        else:
            out.append(a)
    return out


class Recorder(TorchFunctionMode):
    """Records what one statement did to tensors; changes nothing."""

    def __init__(self, module_path: Callable[[torch.nn.Module], str] | None = None) -> None:
        super().__init__()
        self._call = _AsCaller()
        self.active = True
        #: 1 while a backward call (the outermost) runs
        self.in_backward = 0
        self.module_path = module_path or (lambda m: type(m).__name__)
        #: the tracer's own trace function (another one installed is the program's)
        self.ours: Any = None
        #: called with each output that carries a new node, as soon as the call (or the module's
        #: forward) returns, so the node's saved values are read before a later call changes them
        self.on_node: Callable[[torch.Tensor, str], None] | None = None
        #: called after a call whose first argument is a view, with the call and what was noted before it
        #: (:func:`.copyslices.view_write_before`): an in-place call there hides its node inside ``CopySlices``
        self.on_view_write: Callable[..., None] | None = None
        #: id(module) -> the views among a running module's inputs, as noted when its forward began
        self._view_inputs: dict[int, list[tuple[torch.Tensor, ViewWrite]]] = {}
        #: starts watching a backward call (set by the tracer): what ``unwatch`` gets at its end
        self.watch: Callable[[BackwardCall], Any] | None = None
        self.unwatch: Callable[[Any], None] | None = None
        #: the backward call running: its frame, the call, what ``watch`` gave
        self._running: tuple[Any, BackwardCall, Any] | None = None
        self._modules: list[torch.nn.Module] = []
        #: id(module) -> (a weak reference to it, its path as ``module_path`` gave it): a module made at a dead
        #: one's address is not taken for it
        self._paths: dict[int, tuple[Any, str]] = {}
        #: the id a backward node has been given, None before it was read (set by the tracer); the module
        #: hooks read a node only when it has none
        self.known_node: Callable[[Any], str | None] | None = None
        #: how many node reads (``on_node`` calls) the module hooks made (tests count them)
        self.node_reads = 0
        #: the nodes read so far (the tracer's record of them), and how many may be read before the
        #: stack limit must be raised (see :func:`.stack.nodes_before_raise`; set by the run)
        self.nodes_read: Sized = ()
        self.deep_at = float("inf")
        #: the output the last module forward returned with a node, and its version then: its nodes have
        #: been read (a weak reference: the recorder keeps no tensor alive)
        self._last: tuple[weakref.ref[torch.Tensor], int] | None = None
        #: per running module: its tensor arguments, their versions, nodes and bases as its forward began
        self._inputs: list[list[tuple[torch.Tensor, int, Any, Any]]] = []
        self._handles: list[Any] = []
        #: the thread the run records (module hooks are global: other threads' forward calls are not ours)
        self.thread = _get_ident()
        #: tensors handed to NumPy (``t.numpy()``): NumPy can write them behind torch's back
        self.shared: list[weakref.ref[torch.Tensor]] = []
        #: the storages of those tensors, noted at the call: ``x.detach().numpy()`` hands NumPy a temporary
        #: that dies at once, while the array still writes ``x``'s memory (the tracer takes them each step)
        self.shared_storages: list[int] = []
        #: called when recording stops for good (the tracer drops what it held for the run)
        self.on_stop: Callable[[], None] | None = None
        #: > 0 while the recorder is pushed as a torch function mode
        self.pushed = 0
        #: the code of the Python function the mode passes a call on to while the program's own trace function
        #: is on (its frame is the program's call made again: the driver keeps it from the program's function)
        self.passing: types.CodeType | None = None
        #: how many statements ran with the mode pushed (tests count them)
        self.mode_statements = 0
        self.clear()

    # ------------------------------------------------- the mode, per statement
    def mode_on(self, below: bool = False) -> None:
        """Statement by statement: turn the torch function mode on (nested pushes count); ``below``:
        under the modes already on the stack (the program's own, which then see each call first)."""
        self.pushed += 1  # counted first: an interrupt right after leaves no uncounted mode on the stack
        self.mode_statements += 1
        if self.pushed == 1:
            if below:
                _push_below(self)
            else:
                torch._C._push_on_torch_function_stack(self)

    def mode_off(self) -> None:
        if self.pushed == 0:
            return
        self.pushed -= 1
        if self.pushed == 0:
            _remove_mode(self)

    def mode_off_all(self) -> None:
        """Recording stops: the mode leaves the stack, whatever the count says (an interrupt may
        have landed between a count and its push or pop)."""
        self.pushed = 0
        if torch._C._len_torch_function_stack() > 0:
            _remove_mode(self)

    # ------------------------------------------------------------ backward
    def begin_backward(self, frame: Any, kind: str) -> bool:
        """A backward call's frame starts; True when it is the outermost one (then watched)."""
        if self._running is not None or not self.active:
            return False
        try:
            call = backward_call(kind, frame.f_locals)
        except Exception:
            return False
        self.in_backward = 1
        state = None
        if self.watch is not None:
            try:
                state = self.watch(call)
            except Exception:
                state = None
        self._running = (frame, call, state)
        if len(self.nodes_read) > self.deep_at:  # the watch read the call's graph
            self.deepen()
        return True

    def end_backward(self, frame: Any) -> None:
        """A frame of a backward call's code ends (returns or raises)."""
        running = self._running
        if running is None or running[0] is not frame:
            return
        self._running = None
        self.in_backward = 0
        _frame, call, state = running
        if state is not None and self.unwatch is not None:
            self.unwatch(state)
        if self.active:
            self.backwards.append(call)

    def end_all(self) -> None:
        """Recording stops: a backward call still running is no longer watched."""
        running, self._running = self._running, None
        self.in_backward = 0
        if running is not None and running[2] is not None and self.unwatch is not None:
            self.unwatch(running[2])

    # ------------------------------------------------------------- modules
    def watch_modules(self) -> None:
        """Follow modules' forward calls (global hooks, removed by :meth:`unwatch_modules`)."""
        from torch.nn.modules import module as mod

        self._handles = [
            mod.register_module_forward_pre_hook(self._enter_module),
            mod.register_module_forward_hook(self._leave_module, always_call=True),
        ]

    def unwatch_modules(self) -> None:
        """Take this recorder's global module hooks off, also one whose handle an interrupt lost (it landed
        between the registration and the list that keeps the handles): found in torch's tables by identity."""
        from torch.nn.modules import module as mod

        for handle in self._handles:
            handle.remove()
        self._handles = []
        for table, ours in ((mod._global_forward_pre_hooks, self._enter_module),
                            (mod._global_forward_hooks, self._leave_module)):
            for key in [k for k, hook in table.items() if hook == ours]:
                del table[key]
                mod._global_forward_hooks_always_called.pop(key, None)
        self._modules = []
        self._inputs = []
        self._view_inputs = {}
        self.end_all()
        self.mode_off_all()
        if self.on_stop is not None:
            self.on_stop()

    def deepen(self) -> None:
        """The graph read nears what the stack limit can free: raise it (once per run)."""
        self.deep_at = float("inf")
        ensure_deep_stack()

    def running_module(self) -> str:
        """The path of the innermost module whose forward is running now ("" outside any)."""
        return self._path(self._modules[-1]) if self._modules else ""

    def _path(self, module: torch.nn.Module) -> str:
        """``module_path(module)``, asked once per module (a forward call asks it up to three times)."""
        entry = self._paths.get(id(module))
        if entry is not None and entry[0]() is module:
            return entry[1]
        path = self.module_path(module)
        try:
            self._paths[id(module)] = (_ref(module), path)
        except TypeError:  # a module class with ``__slots__`` and no weak references: asked each time
            pass
        return path

    # The two hooks run on every module call of the program, with the line hook on (Python 3.11):
    # each Python function they call costs a trip through it, so on the usual path they call none
    # but the node read itself. A node read (``on_node``) is made only for a node no read has met:
    # the output a module returns is mostly the next module's input, or its container's output.
    def _enter_module(self, module: torch.nn.Module, args: Any) -> None:
        if _get_ident() != self.thread:
            return  # another thread's module: the hooks are global, the recording is the run's thread's
        self._modules.append(module)
        inputs: list[tuple[torch.Tensor, int, Any, Any]] = []
        self._inputs.append(inputs)
        if not self.active or self.in_backward:
            return
        try:
            on_node, last = self.on_node, self._last
            items = args if type(args) is tuple else _tensors(args)
            caller = _getframe(1)
            if caller.f_code is _HOOKS_CODE:  # tensors passed by keyword: ``act(input=t)``, ``attn(query=q, ...)``
                kwargs = caller.f_locals.get("kwargs")
                if kwargs:
                    items = (*items, *kwargs.values())
            for a in items:
                if type(a) in _HOLDERS:  # tensors in a list, tuple or dict (``m([a, b])``): read as the others
                    items = _unpacked(items)
                    break
            with _DisableTorchFunction():  # the learner's modes and subclasses see none of these reads
                for a in items:
                    if not isinstance(a, _Tensor):
                        continue
                    try:
                        version = a._version
                    except Exception:  # inference tensors have no version counter
                        version = -1
                    fn: Any
                    try:
                        fn = a.grad_fn
                    except Exception:  # see graph.grad_fn_of
                        fn = _NO_NODE
                    b = a._base  # (_base_of, inline: no Python call on the usual path)
                    if b is None:
                        inputs.append((a, version, fn, None))  # what an in-place forward changes it from
                    else:
                        self._view_input(module, inputs, (a, version, fn), b)
                    if on_node is None or fn is _NO_NODE or last is not None and last[1] == version \
                            and last[0]() is a:
                        continue  # the output a module just returned, unchanged: its nodes were read then
                    # A node behind an input that no read has met was made before this module ran: it is the
                    # caller's (a walk from this module's output on the way out would otherwise claim it),
                    # and an in-place module (ReLU(inplace=True)) is about to change what it saved: read it now.
                    if fn is not None and (self.known_node is None or self.known_node(fn) is None):
                        self._read_input_node(on_node, a)
        except Exception:  # recording is best effort: the forward runs untouched
            pass

    def _view_input(self, module: torch.nn.Module, inputs: list[tuple[torch.Tensor, int, Any, Any]],
                    read: tuple[torch.Tensor, int, Any], b: torch.Tensor) -> None:
        """A view of ``b`` goes into ``module``: noted in ``inputs`` (``read``: the view, its version and node)
        with its base and the base's node; an in-place module may hide its node, so what the view
        saved is noted too."""
        a = read[0]
        base: tuple[torch.Tensor, Any]
        try:
            base = (b, b.grad_fn)
        except Exception:
            base = (b, _NO_NODE)
        inputs.append((*read, base))
        if self.on_view_write is not None:
            before = view_write_before((a,), {})
            if before is not None:
                self._view_inputs.setdefault(id(module), []).append((a, before))

    def _read_input_node(self, on_node: Callable[[torch.Tensor, str], None], a: torch.Tensor) -> None:
        """Read the node behind a module's input that no read has met (it is the caller's)."""
        self.node_reads += 1
        on_node(a, self._path(self._modules[-2]) if len(self._modules) > 1 else "")
        if len(self.nodes_read) > self.deep_at:
            self.deepen()

    def _leave_module(self, module: torch.nn.Module, _args: Any, out: Any) -> None:
        if _get_ident() != self.thread:
            return
        inputs = self._inputs.pop() if self._inputs else ()
        views = self._view_inputs.pop(id(module), None) if self._view_inputs else None
        written: list[tuple[torch.Tensor, ViewWrite]] = []  # views among the inputs the forward wrote
        modules = self._modules
        if modules and modules[-1] is module:
            modules.pop()
        if not self.active or self.in_backward:
            return
        try:
            with _DisableTorchFunction():
                for a, v0, fn0, base in inputs:
                    try:
                        version = a._version
                    except Exception:
                        version = -1
                    if version != v0:  # changed in place by the forward (ReLU(inplace=True))
                        self.inplace.append((_inplace_op(a), a))
                        self.written.append(a)
                        self._changed(a, v0, fn0, base)
                        written += [(view, before) for view, before in views or () if view is a]
                if isinstance(module, _NormBase):  # its running statistics change in the kernel, no version bump
                    self.written.extend(b for b in module._buffers.values() if isinstance(b, torch.Tensor))
                on_node, last = self.on_node, self._last
                for o in (out,) if isinstance(out, _Tensor) else _tensors(out):
                    try:
                        version = o._version
                    except Exception:
                        version = -1
                    if last is not None and last[1] == version and last[0]() is o:
                        continue  # a container's output, its last child's: recorded and read then
                    last = self._output_read(module, o, version, inputs, on_node, last)
                for view, before in written:  # once the nodes are read: what the hidden one saved
                    if self.on_view_write is not None:
                        self.on_view_write(type(module).forward, (view,), {}, before, module)
        except Exception:
            pass

    def _output_read(self, module: torch.nn.Module, o: torch.Tensor, version: int,
                     inputs: Sequence[tuple[torch.Tensor, int, Any, Any]],
                     on_node: Callable[[torch.Tensor, str], None] | None,
                     last: tuple[weakref.ref[torch.Tensor], int] | None,
                     ) -> tuple[weakref.ref[torch.Tensor], int] | None:
        """A tensor ``module`` returned (at ``version``), not the one read last (``last``, given back,
        or the new last one): a new output with a node has its node read."""
        for a, v0, _fn0, _base in inputs:
            if a is o and v0 == version:
                return last  # an input handed back unchanged (Identity, Dropout in eval): read as it came in
        try:
            fn = o.grad_fn
        except Exception:
            return last
        if fn is None:
            return last
        # a new output with a node: the node, and those it reaches that no read has met, were
        # made by this forward (the ones made before it were read when it began)
        entry = self._paths.get(id(module))  # self._path(module), inline on the usual path
        path = entry[1] if entry is not None and entry[0]() is module else self._path(module)
        self.ops.append(("", o, path))
        if on_node is not None:
            self.node_reads += 1
            on_node(o, path)
            if len(self.nodes_read) > self.deep_at:
                self.deepen()
        self._last = last = (_ref(o), version)
        return last

    def _changed(self, t: torch.Tensor, version: int, fn: Any, base: tuple[torch.Tensor, Any] | None) -> None:
        """An in-place call changed ``t`` (and its base, which shares its version counter) from ``version``
        and node ``fn``."""
        if fn is not _NO_NODE and version >= 0:
            self.changed_from.append((t, version, fn))
        if base is not None and base[1] is not _NO_NODE and version >= 0:
            self.changed_from.append((base[0], version, base[1]))

    def clear(self) -> None:
        #: tensors a call may have written without bumping their version (in-place targets, even
        #: when the call raised; ``out=``; a norm's running statistics)
        self.written: list[torch.Tensor] = []
        #: (op name, output, module path) for outputs that carry a grad_fn, in call order
        self.ops: list[tuple[str, torch.Tensor, str]] = []
        #: (op name, target) for in-place calls
        self.inplace: list[tuple[str, torch.Tensor]] = []
        #: (tensor, version, node) of each tensor an in-place call changed, as it was before the call
        #: (a view's base too), in call order: a tensor the statement made is told changed from there
        self.changed_from: list[tuple[torch.Tensor, int, Any]] = []
        #: (output, reason, source) for outputs cut from the graph
        self.untracked: list[tuple[torch.Tensor, str, torch.Tensor | None]] = []
        self.backwards: list[BackwardCall] = []
        #: tensors whose flags or ``.grad`` a call may have set without a version bump
        #: (``t.grad = ...``, ``t.requires_grad = ...``, ``t.data = ...``, ``retain_grad()``)
        self.flagged: list[torch.Tensor] = []
        self._last = None
        #: set when a statement since the last snapshot may have changed ``.grad`` of any tensor shown
        #: (``"grads"``), or also the values of those tensors (``"values"``: see :func:`grads_may_change`)
        self.grads_changed = ""

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        if kwargs is None:
            kwargs = {}
        tracer = sys.gettrace()
        if tracer is not None and tracer != self.ours:  # the program's own trace function is on
            sys.settrace(None)  # turned back on by _shielded, which it then does not see either
            return self._shielded(tracer, func, args, kwargs)
        if isinstance(func, _FunctionType):
            func = original_of(func)
        if not self.active:
            return self._call(func, args, kwargs)
        name = getattr(func, "__name__", "")
        if name in _PASS:
            if name in _FLAGS and args and isinstance(args[0], torch.Tensor):
                self.flagged.append(args[0])
            return self._call(func, args, kwargs)
        if _is_backward(func):  # heard from its frame (see .backward)
            return self._call(func, args, kwargs)
        before = self._before(name, args, kwargs)
        view = self._view_before(args, kwargs) if self.on_view_write is not None else None
        out = self._call(func, args, kwargs)
        self._after(name, out, args, before)
        if view is not None and self.on_view_write is not None:
            try:
                self.on_view_write(func, args, kwargs, view)
            except Exception:  # recording is best effort
                pass
        return out

    def _view_before(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ViewWrite | None:
        if not args or not isinstance(args[0], _Tensor):
            return None
        try:
            with _DisableTorchFunction():
                return view_write_before(args, kwargs)
        except Exception:
            return None

    def _shielded(self, tracer: Any, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A call made while the program's own trace function is installed: it sees the call as
        made (no stand-in frame) and none of the recording around it. Called with tracing off."""
        try:
            if isinstance(func, _FunctionType):
                func = original_of(func)
            name = getattr(func, "__name__", "")
            if self.active and name in _FLAGS and args and isinstance(args[0], torch.Tensor):
                self.flagged.append(args[0])
            plain = not self.active or name in _PASS or _is_backward(func)
            before = None if plain else self._before(name, args, kwargs)
            view = None if plain or self.on_view_write is None else self._view_before(args, kwargs)
            self.passing = getattr(func, "__code__", None)  # (a Python function's frame is not heard twice)
        finally:
            sys.settrace(tracer)
        try:
            out = func(*args, **kwargs)
        finally:
            self.passing = None
        if plain:
            return out
        sys.settrace(None)
        try:
            self._after(name, out, args, before)
            if view is not None and self.on_view_write is not None:  # what a node inside CopySlices saved
                try:
                    self.on_view_write(func, args, kwargs, view)
                except Exception:  # recording is best effort
                    pass
        finally:
            sys.settrace(tracer)
        return out

    def _before(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Was | None:
        """What the call may write, noted before it runs; the version, node and base of its first argument."""
        try:
            self._note_writes(name, args, kwargs)
            if args and isinstance(args[0], torch.Tensor):
                first = args[0]
                with _DisableTorchFunction():
                    return version_of(first), grad_fn_of(first), _base_of(first)
        except Exception:
            pass
        return None

    def _after(self, name: str, out: Any, args: tuple[Any, ...], was: _Was | None) -> None:
        try:
            with _DisableTorchFunction():  # the learner's subclass sees only its own calls
                first = args[0] if args and isinstance(args[0], torch.Tensor) else None
                if first is not None and was is not None and version_of(first) != was[0]:
                    if not _inplace_name(name):  # F.relu(x, inplace=True): in place under another name, told by
                        self.inplace.append((name + "_", first))  # the in-place one's (as a module's forward is)
                    self._changed(first, *was)
                self._record(name, out, args)
        except Exception:  # recording is best effort: the call's result goes back untouched
            pass

    def _note_writes(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Before the call: what it may write, also if it raises halfway."""
        written = self.written
        if _inplace_name(name):
            if args and isinstance(args[0], torch.Tensor):
                written.append(args[0])
            elif args and isinstance(args[0], (list, tuple)):  # ``torch._foreach_add_(params, ...)``
                written.extend(t for t in args[0] if isinstance(t, torch.Tensor))
        elif name in _FLAGS and args and isinstance(args[0], torch.Tensor):
            self.flagged.append(args[0])
        out = kwargs.get("out")
        if out is not None:
            outs = out if isinstance(out, (tuple, list)) else (out,)
            written.extend(t for t in outs if isinstance(t, torch.Tensor))
        if "norm" in name:  # batch/instance norm update their running statistics in the kernel
            written.extend(a for a in args if isinstance(a, torch.Tensor))
            written.extend(a for a in kwargs.values() if isinstance(a, torch.Tensor))
        if name in _SHARES_MEMORY and args and isinstance(args[0], torch.Tensor):
            self.shared.append(weakref.ref(args[0]))
            try:
                self.shared_storages.append(int(args[0].untyped_storage().data_ptr()))
            except Exception:  # a layout without a storage gives NumPy no memory to write
                pass

    def _record(self, name: str, out: Any, args: tuple[Any, ...]) -> None:
        if _inplace_name(name):
            if args and isinstance(args[0], torch.Tensor):
                self.inplace.append((name, args[0]))
        if isinstance(out, torch.Tensor):
            self._output(name, out, args)
        elif isinstance(out, (tuple, list)):
            for item in out:
                if isinstance(item, torch.Tensor):
                    self._output(name, item, args)

    def _output(self, name: str, out: torch.Tensor, args: tuple[Any, ...]) -> None:
        if grad_fn_of(out) is not None:
            path = self._path(self._modules[-1]) if self._modules else ""
            self.ops.append((name, out, path))
            if self.on_node is not None:
                self.on_node(out, path)
                if len(self.nodes_read) > self.deep_at:
                    self.deepen()
            return
        if out.requires_grad:
            return
        source = next((a for a in args if isinstance(a, torch.Tensor) and a.requires_grad), None)
        if source is None:
            return
        if name in ("detach", "detach_"):
            self.untracked.append((out, "detach", source))
        elif torch.is_inference_mode_enabled():
            self.untracked.append((out, "inference_mode", None))
        elif not torch.is_grad_enabled():
            self.untracked.append((out, "no_grad", None))


#: the code of the recorder's method that passes a call on while the program's own trace function is on
_SHIELDED = Recorder._shielded.__code__


def _push_below(mode: Any) -> None:
    """Put ``mode`` at the bottom of the torch function mode stack; the modes on it stay, in order."""
    above = []
    try:
        while torch._C._len_torch_function_stack() > 0:
            above.append(torch._C._pop_torch_function_stack())
        torch._C._push_on_torch_function_stack(mode)
    finally:
        for m in reversed(above):
            torch._C._push_on_torch_function_stack(m)


def _remove_mode(mode: Any) -> None:
    """Take ``mode`` off the torch function mode stack; modes the learner pushed above it stay."""
    above = []
    try:
        while torch._C._len_torch_function_stack() > 0:
            top = torch._C._pop_torch_function_stack()
            if top is mode:
                break
            above.append(top)
    finally:
        for m in reversed(above):
            torch._C._push_on_torch_function_stack(m)


def drop_left_hooks(live: set[int]) -> None:
    """Take off the global module hooks of recorders whose run is over (``live``: the ids of the recorders of the
    runs still going): an interrupt landing inside a run's own clean-up (Ctrl-C in a notebook) can leave them on,
    and every later trace in that process would then hear each module twice."""
    from torch.nn.modules import module as mod

    for table in (mod._global_forward_pre_hooks, mod._global_forward_hooks):
        for key, hook in list(table.items()):
            owner = getattr(hook, "__self__", None)
            if isinstance(owner, Recorder) and id(owner) not in live:
                del table[key]
                mod._global_forward_hooks_always_called.pop(key, None)
