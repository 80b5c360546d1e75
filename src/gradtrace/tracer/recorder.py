"""Watching torch calls while a statement runs (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

A :class:`torch.overrides.TorchFunctionMode` sees every torch call with its
inputs and output (the output's ``grad_fn`` is already set). The recorder keeps,
for the statement being run, the outputs that carry a new node (in creation
order), the in-place calls, the tensors made outside the graph, and each
``backward()``/``autograd.grad`` call. It passes every call through unchanged.
"""

from __future__ import annotations

import sys
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from ..model import Flow
from .graph import grad_fn_of, version_of

_INPLACE_DUNDER = frozenset(
    {"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__ipow__",
     "__imatmul__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", "__imod__"}
)
_SHARES_MEMORY = frozenset({"numpy", "__array__"})
_PASS = frozenset({"__get__", "__set__", "__delete__", "_set_grad_enabled", "__repr__", "__format__"})
#: calls that change a tensor's flags or ``.grad`` and leave its version alone
_FLAGS = frozenset({"__set__", "__delete__", "retain_grad"})


@dataclass
class BackwardCall:
    """One backward()/autograd.backward/autograd.grad call, as made."""

    call: str
    roots: list[torch.Tensor]
    gradient: Any
    retain_graph: bool
    create_graph: bool
    flow: list[Flow] = field(default_factory=list)


def _inplace_name(name: str) -> bool:
    return (name.endswith("_") and not name.endswith("__")) or name in _INPLACE_DUNDER


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], i: int, name: str, default: Any = None) -> Any:
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _as_list(x: Any) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for t in x if isinstance(t, torch.Tensor)]
    return []


_FunctionType = types.FunctionType
_BACKWARD = torch.Tensor.backward
_AUTOGRAD_BACKWARD = torch.autograd.backward
_AUTOGRAD_GRAD = torch.autograd.grad
_DISPATCHER = torch.overrides.handle_torch_function.__code__
_ORIGINALS: dict[types.CodeType, Any] = {}


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


def _backward_call(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> BackwardCall | None:
    if func is _BACKWARD:
        create = bool(_arg(args, kwargs, 3, "create_graph", False))
        retain = _arg(args, kwargs, 2, "retain_graph", None)
        return BackwardCall("backward", _as_list(args[0] if args else kwargs.get("self")),
                            _arg(args, kwargs, 1, "gradient"), create if retain is None else bool(retain), create)
    if func is _AUTOGRAD_BACKWARD:
        create = bool(_arg(args, kwargs, 3, "create_graph", False))
        retain = _arg(args, kwargs, 2, "retain_graph", None)
        return BackwardCall("autograd.backward", _as_list(_arg(args, kwargs, 0, "tensors")),
                            _arg(args, kwargs, 1, "grad_tensors"), create if retain is None else bool(retain),
                            create)
    if func is _AUTOGRAD_GRAD:
        create = bool(_arg(args, kwargs, 4, "create_graph", False))
        retain = _arg(args, kwargs, 3, "retain_graph", None)
        return BackwardCall("autograd.grad", _as_list(_arg(args, kwargs, 0, "outputs")),
                            _arg(args, kwargs, 2, "grad_outputs"), create if retain is None else bool(retain),
                            create)
    return None


def _template() -> types.CodeType:
    ns: dict[str, Any] = {}
    exec(compile("def _t(f, a, k):\n    return f(*a, **k)\n", "<gradtrace>", "exec"), ns)
    return ns["_t"].__code__


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


class Recorder(TorchFunctionMode):
    """Records what one statement did to tensors; changes nothing."""

    def __init__(self, module_path: Callable[[torch.nn.Module], str] | None = None) -> None:
        super().__init__()
        self._call = _AsCaller()
        self.active = True
        self.in_backward = 0
        self.module_path = module_path or (lambda m: type(m).__name__)
        #: the tracer's own trace function (another one installed is the program's)
        self.ours: Any = None
        #: called with each output that carries a new node, as soon as the call returns, so
        #: the node's saved values are read before the same statement changes them
        self.on_node: Callable[[torch.Tensor, str], None] | None = None
        #: runs a backward call, watching it (set by the tracer); None runs it plainly
        self.watch: Callable[[BackwardCall, Callable[[], Any]], Any] | None = None
        self._modules: list[torch.nn.Module] = []
        self._handles: list[Any] = []
        #: tensors handed to NumPy (``t.numpy()``): NumPy can write them behind torch's back
        self.shared: list[weakref.ref[torch.Tensor]] = []
        #: called when recording stops for good (the tracer drops what it held for the run)
        self.on_stop: Callable[[], None] | None = None
        self.clear()

    def watch_modules(self) -> None:
        """Note which module's forward is running (global hooks, removed by :meth:`unwatch_modules`)."""
        from torch.nn.modules import module as mod

        self._handles = [
            mod.register_module_forward_pre_hook(self._enter_module),
            mod.register_module_forward_hook(self._leave_module, always_call=True),
        ]

    def unwatch_modules(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
        self._modules = []
        if self.on_stop is not None:
            self.on_stop()

    def _enter_module(self, module: torch.nn.Module, args: Any) -> None:
        self._modules.append(module)

    def _leave_module(self, module: torch.nn.Module, args: Any, out: Any) -> None:
        if self._modules and self._modules[-1] is module:
            self._modules.pop()

    def clear(self) -> None:
        #: tensors a call may have written without bumping their version (in-place targets, even
        #: when the call raised; ``out=``; a norm's running statistics)
        self.written: list[torch.Tensor] = []
        #: (op name, output, module path) for outputs that carry a grad_fn, in call order
        self.ops: list[tuple[str, torch.Tensor, str]] = []
        #: (op name, target) for in-place calls
        self.inplace: list[tuple[str, torch.Tensor]] = []
        #: (output, reason, source) for outputs cut from the graph
        self.untracked: list[tuple[torch.Tensor, str, torch.Tensor | None]] = []
        self.backwards: list[BackwardCall] = []
        #: tensors whose flags or ``.grad`` a call may have set without a version bump
        #: (``t.grad = ...``, ``t.requires_grad = ...``, ``t.data = ...``, ``retain_grad()``)
        self.flagged: list[torch.Tensor] = []

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
        call = _backward_call(func, args, kwargs)
        if call is not None:
            return self._backward(call, func, args, kwargs)
        before = self._before(name, args, kwargs)
        out = self._call(func, args, kwargs)
        self._after(name, out, args, before)
        return out

    def _shielded(self, tracer: Any, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A call made while the program's own trace function is installed: it sees the call as
        made (no stand-in frame) and none of the recording around it. Called with tracing off."""
        try:
            if isinstance(func, _FunctionType):
                func = original_of(func)
            name = getattr(func, "__name__", "")
            if self.active and name in _FLAGS and args and isinstance(args[0], torch.Tensor):
                self.flagged.append(args[0])
            call = None if not self.active or name in _PASS else _backward_call(func, args, kwargs)
            before = self._before(name, args, kwargs) if self.active and call is None else None
        finally:
            sys.settrace(tracer)
        if not self.active or name in _PASS:
            return func(*args, **kwargs)
        if call is not None:
            return self._backward(call, func, args, kwargs)
        out = func(*args, **kwargs)
        sys.settrace(None)
        try:
            self._after(name, out, args, before)
        finally:
            sys.settrace(tracer)
        return out

    def _backward(self, call: BackwardCall, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.in_backward += 1
        try:
            if self.watch is None:
                return func(*args, **kwargs)
            return self.watch(call, lambda: func(*args, **kwargs))
        finally:
            self.in_backward -= 1
            self.backwards.append(call)

    def _before(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
        """What the call may write, noted before it runs; the version of its first argument."""
        try:
            self._note_writes(name, args, kwargs)
            if args and isinstance(args[0], torch.Tensor):
                with torch._C.DisableTorchFunctionSubclass():
                    return version_of(args[0])
        except Exception:
            pass
        return None

    def _after(self, name: str, out: Any, args: tuple[Any, ...], v0: int | None) -> None:
        try:
            with torch._C.DisableTorchFunctionSubclass():  # the learner's subclass sees only its own calls
                first = args[0] if args and isinstance(args[0], torch.Tensor) else None
                if first is not None and v0 is not None and version_of(first) != v0 and not _inplace_name(name):
                    self.inplace.append((name, first))  # F.relu(x, inplace=True): in place under another name
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
            path = self.module_path(self._modules[-1]) if self._modules else ""
            self.ops.append((name, out, path))
            if self.on_node is not None:
                self.on_node(out, path)
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
