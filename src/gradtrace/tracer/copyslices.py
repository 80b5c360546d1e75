"""What a node wrapped in ``CopySlices`` saved, learned from stand-ins (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

An in-place call on a view (``a.mul_(c)`` with ``a = b.reshape(-1)``) makes its node (``MulBackward0``)
and hands it to a ``CopySlices`` node on the base; PyTorch keeps that inner node, and so the values it
saved, out of Python's reach (``CopySlices`` exposes no ``fn`` and no saved slots). What it saved is
learned from PyTorch itself: the same call is made again on stand-ins of its tensors (zeros of the same
shapes and dtypes, on the CPU, the random stream put back after), on a target that is no view, so the
node it makes is the target's own and its saved slots can be read. Which stand-in each slot holds, and
at which version, says which of the learner's tensors the hidden node saved, and at which version.
(Meta tensors would cost no memory, but their first use imports sympy: seconds and 800 modules.)

The recorder notes a call on a view before it runs (:func:`view_write_before`); the
tracer's hooks hand it to :func:`view_write` once it returned, which shows what the
hidden node saved as the ``CopySlices`` node's saved values in the graph book.
"""

from __future__ import annotations

import functools
import types
import warnings
from typing import Any

import torch

from .graph import _VERSIONS, COPY_SLICES, GraphBook, _data, grad_fn_of, kind_of, version_of
from .quiet import quiet

#: the types of the other arguments a call may have for it to be made again: nothing that runs Python code
_PLAIN_ARGS = frozenset({int, float, bool, complex, str, type(None), slice, type(Ellipsis), torch.dtype,
                         torch.device, torch.memory_format, torch.layout, torch.Size})
#: the most memory the stand-ins of one call may take: a bigger call's hidden saves are not learned (a
#: kernel must never run out of memory for a prediction)
STAND_IN_BYTES = 64 << 20


class ViewWrite:
    """What a call whose first argument is a view is noted with before it runs (see :func:`view_write_before`)."""

    __slots__ = ("base_fn", "tensors", "version")

    def __init__(self, base_fn: Any, tensors: list[tuple[torch.Tensor, int, bool]], version: int) -> None:
        #: the base's ``grad_fn`` before the call (a new ``CopySlices`` after it means the call made one)
        self.base_fn = base_fn
        #: each tensor argument, its version and whether it required grad, before the call
        self.tensors = tensors
        #: the view's version before the call
        self.version = version


def _tensor_args(args: Any, kwargs: dict[str, Any]) -> list[torch.Tensor] | None:
    """The tensors among a call's arguments (also inside lists and tuples); None when an argument is
    anything else than a tensor or a plain value (it could run code of the program's when used)."""
    out: list[torch.Tensor] = []
    for x in (*args, *kwargs.values()):
        for item in x if type(x) in (list, tuple) else (x,):
            if isinstance(item, torch.Tensor):
                out.append(item)
            elif type(item) not in _PLAIN_ARGS:
                return None
    return out


def view_write_before(args: tuple[Any, ...], kwargs: dict[str, Any]) -> ViewWrite | None:
    """Noted before a torch call whose first argument is a view: the base's node and every tensor argument's
    version. None for any other call (read with torch function handling off)."""
    first = args[0] if args else None
    if not isinstance(first, torch.Tensor) or not first._is_view():
        return None
    tensors = _tensor_args(args, kwargs)
    if tensors is None:
        return None
    base = first._base
    return ViewWrite(None if base is None else grad_fn_of(base),
                     [(t, version_of(t), t.requires_grad) for t in tensors], version_of(first))


def _torch_own(func: Any) -> bool:
    """True for a function or method of torch's own (made again on stand-ins: none runs the program's code)."""
    if isinstance(func, types.FunctionType):
        module = getattr(func, "__module__", None) or ""
        return module == "torch" or module.startswith("torch.")
    return isinstance(func, (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType))


def _stand_in(t: torch.Tensor, grad: bool, target: bool) -> torch.Tensor:
    """A tensor of zeros shaped as ``t``, of its dtype, on the CPU; requiring grad when ``t`` did, and no
    leaf when it is the call's target (an in-place call on a leaf that requires grad raises)."""
    twin = torch.zeros(t.shape, dtype=t.dtype)
    if grad:
        twin.requires_grad_(True)
        if target:
            twin = twin.clone()
    return twin


def _drop_warning(*args: Any, **kwargs: Any) -> None:
    """A warning the stand-in call gives is not the program's: shown nowhere."""


def _twin_version(node: Any, slot: str, data: torch.Tensor, listed: bool = False) -> int | None:
    """The version a stand-in node saved ``slot`` (``data``) at: the tensor's own when reading it passes the
    check, else the one PyTorch names as expected (``listed``: ``data`` is one of a list of saved tensors,
    and which one the check names is not said: None)."""
    try:
        getattr(node, "_saved_" + slot)
    except RuntimeError as exc:
        said = _VERSIONS.search(str(exc))
        return int(said.group(2)) if said is not None and not listed else None
    except Exception:
        return None
    return version_of(data)


def _torch_module(module: Any, func: Any) -> bool:
    """True for a module of torch's own class holding no state (``ReLU(inplace=True)``, ``Dropout``), whose
    ``forward`` is ``func``: calling it again runs none of the program's code and changes nothing of it."""
    cls = type(module)
    return (cls.__module__.startswith("torch.nn.modules.") and func is cls.forward and _torch_own(func)
            and "forward" not in vars(module) and not module._parameters and not module._buffers
            and not module._modules)


def hidden_saves(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], before: ViewWrite,
                 copy_slices: Any, module: Any = None) -> tuple[str, list[tuple[str, torch.Tensor, int]]] | None:
    """What the node an in-place call on a view made, now inside ``copy_slices``, saved of the call's tensors:
    its name and ``(slot, tensor, version saved at)``; None when that cannot be told for sure.

    ``module``: the call was ``func(module, *args)``, a module's forward (see :func:`_torch_module`).
    The call is made again on stand-ins (see above), with grad mode on as the call had it, no torch
    function or dispatch mode of the program's in the way, and warnings shown nowhere. Not done when
    saved-tensor hooks are active (the program's pack hook would run), a function transform is, or the
    program's profiler runs.
    """
    if not (_torch_own(func) if module is None else _torch_module(module, func)) or "out" in kwargs:
        return None
    if torch._C._autograd._top_saved_tensors_default_hooks(False) is not None:
        return None
    if torch._C._are_functorch_transforms_active():
        return None
    if torch._C._autograd._profiler_enabled():  # the program's profile would list the stand-in call's ops
        return None
    with quiet():  # (setting grad mode too: a torch function mode would see it)
        grad_mode = torch.is_grad_enabled()
        shown = warnings.showwarning
        generator = torch.default_generator
        state = generator.get_state()  # a random call (dropout) draws from the program's stream: put back
        try:
            warnings.showwarning = _drop_warning
            torch._C._set_grad_enabled(True)  # as the call had it: it made a node
            call = func if module is None else functools.partial(func, module)
            return _hidden_saves(call, args, kwargs, before, copy_slices)
        except Exception:
            return None
        finally:
            generator.set_state(state)
            torch._C._set_grad_enabled(grad_mode)
            warnings.showwarning = shown


def _swap(x: Any, twins: dict[int, tuple[torch.Tensor, torch.Tensor, int]]) -> Any:
    """``x`` with each of the call's tensors in it replaced by its stand-in. (A module function, not a
    closure: a closure calling itself is a reference cycle, which would keep the program's tensors in
    ``twins`` alive until the next collection, and so change when they die.)"""
    if isinstance(x, torch.Tensor):
        return twins[id(x)][1]
    if type(x) in (list, tuple):
        return type(x)(_swap(item, twins) for item in x)
    return x


def _stand_ins(before: ViewWrite, target: torch.Tensor) -> dict[int, tuple[torch.Tensor, torch.Tensor, int]] | None:
    """id(tensor) -> (tensor, its stand-in, its version before the call) for each of the call's tensors; None
    when they would take more than :data:`STAND_IN_BYTES`, or one is not a plain strided CPU tensor."""
    twins: dict[int, tuple[torch.Tensor, torch.Tensor, int]] = {}
    distinct = {id(t): t for t, _v, _g in before.tensors}.values()
    if sum(t.numel() * t.element_size() for t in distinct) > STAND_IN_BYTES:
        return None
    for t, version, grad in before.tensors:
        if id(t) in twins:
            continue
        if type(t) not in (torch.Tensor, torch.nn.Parameter) or t.layout != torch.strided or t.is_quantized \
                or t.device.type != "cpu":
            return None
        twins[id(t)] = (t, _stand_in(t, grad, t is target), version)
    return twins


def _hidden_saves(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], before: ViewWrite,
                  copy_slices: Any) -> tuple[str, list[tuple[str, torch.Tensor, int]]] | None:
    target = args[0]
    twins = _stand_ins(before, target)
    if twins is None:
        return None
    twin = twins[id(target)][1]
    start = grad_fn_of(twin)
    func(*(_swap(a, twins) for a in args), **{k: _swap(v, twins) for k, v in kwargs.items()})
    fn = grad_fn_of(twin)
    if fn is None or fn is start or kind_of(fn).name == COPY_SLICES:
        return None
    # one node made, in the place of the one inside CopySlices: its first input is the target's node before
    # the call, and its other inputs are those CopySlices took over from it
    nexts, outer = fn.next_functions, copy_slices.next_functions
    if len(nexts) != len(outer) or nexts[0][0] is not start:
        return None
    if any((a is None) != (b is None) for (a, _), (b, _) in zip(nexts[1:], outer[1:], strict=True)):
        return None
    by_storage: dict[int, int] = {}
    for k, (_t, stand_in, _v) in twins.items():
        by_storage.setdefault(stand_in.untyped_storage()._cdata, k)
    found: list[tuple[str, torch.Tensor, int]] = []
    for slot, getter in kind_of(fn).raw_getters:
        raw = getattr(fn, getter)
        if isinstance(raw, (list, tuple)):
            items = [(f"{slot}[{i}]", _data(item)) for i, item in enumerate(raw)]
        else:
            items = [(slot, _data(raw))]
        for name, data in items:
            if data is None:
                continue
            key = next((k for k, (_t, stand_in, _v) in twins.items() if data is stand_in), None)
            if key is None:  # a saved output shares the target's memory; anything else is the node's own copy
                key = by_storage.get(data.untyped_storage()._cdata)
            if key is None:
                continue
            saved_at = _twin_version(fn, slot, data, name != slot)
            if saved_at is None:
                return None
            t, _stand_in_t, version = twins[key]
            found.append((name, t, version + saved_at))  # every stand-in starts at version 0
    return kind_of(fn).name, found


def view_write(book: GraphBook, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], before: ViewWrite,
               module: Any = None) -> None:
    """An in-place call on a view just ran (``before``: as noted before it, see :func:`view_write_before`;
    ``module``: the call was that module's forward, ``func(module, *args)``).

    When it made a ``CopySlices`` on the view's base, the node it wraps saved values no Python code can
    read: :func:`hidden_saves` tells which of the call's tensors, and at which versions; they are shown
    as the ``CopySlices`` node's, named ``<inner node>.<slot>`` (``MulBackward0.other``), and go stale
    as any saved value does.
    """
    hidden = book.hidden_node(args[0], before)
    if hidden is None:
        return
    copy_slices, nid, info = hidden
    told = hidden_saves(func, args, kwargs, before, copy_slices, module)
    if not told or not told[1]:
        return
    inner, found = told
    book.add_hidden_saves(copy_slices, nid, info, inner, found)
