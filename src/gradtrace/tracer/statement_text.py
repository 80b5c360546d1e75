"""What a statement's text (and the names it calls) tells before it runs (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

The run driver asks these as each statement starts: whether its text needs the
recorder's torch function mode (:func:`needs_mode`: an in-place call, ``out=``,
``+=``, ``t.grad = ...``, ``detach``, ...), which bare names and held items it
calls (:func:`called_names`, :func:`held_calls`) and whether one of those writes in
place (:func:`calls_in_place`, read with dictionary and sequence lookups only), and
whether it may change ``.grad`` of tensors it does not name (:func:`grads_may_change`).
Each answer is a pure function of the text, or of what the names hold now.
"""

from __future__ import annotations

import functools
import keyword
import re
import types
import weakref
from typing import Any

import torch

_INPLACE_DUNDER = frozenset(
    {"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__ipow__",
     "__imatmul__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", "__imod__"}
)


def _inplace_name(name: str) -> bool:
    return (name.endswith("_") and not name.endswith("__")) or name in _INPLACE_DUNDER


_FunctionType = types.FunctionType


#: statement text that can change, in the same statement, a value its own calls saved, write
#: behind the version counter, set flags or ``.grad``, cut outputs from the graph, or pack
#: saved values: such a statement runs with the recorder pushed as a torch function mode
_NEEDS_MODE = re.compile(
    r"(?<!\w)(?!_)\w*[A-Za-z0-9]_\s*\("  # an in-place call: x.add_(1), torch.relu_(x), init.normal_(w)
    r"|\binplace\b|[(,]\s*out\s*="  # inplace=True, out=
    r"|(?:\*\*|//|>>|<<|[-+*/%@&|^])=(?!=)"  # x += 1
    r"|\]\s*(?:\*\*|//|>>|<<|[-+*/%@&|^])?=(?!=)"  # x[0] = 1
    r"|\.\s*(?:grad|data|requires_grad)\s*=(?!=)"  # t.grad = None, w.data = ...
    r"|\b(?:get|set)attr\s*\("  # getattr(a, "mul_")(c), setattr(w, "data", v): a name given as a string
    r"|\boperator\s*\.\s*(?:__)?(?:i(?:add|and|concat|floordiv|lshift|matmul|mod|mul|or|pow|rshift|sub|truediv|xor)"
    r"|setitem)(?:__)?\b"  # operator.imul(b[0], c), operator.setitem(t, 0, v)
    # an in-place dunder method called by its name: a.__imul__(c), t.__setitem__(0, v)
    r"|\.\s*__(?:i(?:add|and|floordiv|lshift|matmul|mod|mul|or|pow|rshift|sub|truediv|xor)|setitem)__\s*\("
    r"|numpy|__array__|asarray|detach|retain_grad|checkpoint|saved_tensors_hooks|batch_norm|instance_norm"
    r"|save_on_cpu|set_grad_enabled|inference_mode|no_grad|\bset_\b"
    # calls whose torch code sets ``param.data = ...`` (same objects, new memory or dtype, same version):
    # a module's conversions (``model.double()``, ``model.to(torch.float64)``), ``vector_to_parameters`` and
    # ``prune.remove(layer, "weight")`` (which makes the pruned values the parameter's, through ``.data =``)
    r"|\.\s*(?:double|half|bfloat16|float|to|type|cuda|cpu)\s*\(|vector_to_parameters|\bremove\s*\("
)


def needs_mode(code: str) -> bool:
    """True when a statement with this text must run with the recorder's torch function mode on."""
    return _NEEDS_MODE.search(code) is not None


#: a call of a bare name (``f(c)`` after ``f = a.mul_``): what the name holds is looked at as the statement
#: starts (:func:`calls_in_place`); a name after a dot is an attribute's, which the text above tells
_CALLED_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(")
_KEYWORDS = frozenset(keyword.kwlist)
_BUILTIN_CALLS = (types.BuiltinFunctionType, types.MethodDescriptorType, types.MethodWrapperType,
                  types.WrapperDescriptorType)
#: id(code of a lambda) -> (the code, whether it names an in-place method); lambdas run inside their statement
_LAMBDA_WRITES: dict[int, tuple[types.CodeType, bool]] = {}


def called_names(code: str) -> tuple[str, ...]:
    """The bare names a statement with this text calls (``f`` of ``f(c)``), keywords left out."""
    return tuple(dict.fromkeys(n for n in _CALLED_NAME.findall(code) if n not in _KEYWORDS))


def calls_in_place(frame: types.FrameType, names: tuple[str, ...],
                   held: tuple[tuple[str, int | str], ...] = ()) -> bool:
    """True when one of ``names``, or one of ``held`` (:func:`held_calls`), as ``frame`` sees it now, is
    something that writes a tensor in place with no in-place name in the statement's text: a bound in-place
    method (``f = a.mul_``), torch's own in-place function (``op = torch.relu_``, ``init = nn.init.zeros_``),
    a partial of one, a lambda that calls one, or a module whose ``forward`` is such a lambda; for ``held``,
    an item of a list or tuple or an instance's own attribute that is one. Read with dictionary and sequence
    lookups only: no code of the program runs."""
    f_globals = frame.f_globals
    local = frame.f_locals if frame.f_code.co_flags & _CO_OPTIMIZED else None
    filename = frame.f_code.co_filename
    for name, key in (*((n, None) for n in names), *held):
        if local is not None and name in local:
            value = local[name]
        elif name in f_globals:
            value = f_globals[name]
        else:
            continue  # a builtin of Python's (or no such name)
        if key is not None:
            value = _held_item(value, key)
            if value is _NOTHING:
                continue
        if _writes_in_place(value, filename):
            return True
    return False


#: a call of what a name holds in a list or tuple at a fixed place (``ops[0](c)``) or in an instance's own
#: attribute (``box.f(c)``): looked at as the statement starts (:func:`calls_in_place`)
_HELD_CALL = re.compile(r"(?<![\w.\])])([A-Za-z_]\w*)\s*(?:\[\s*(-?\d+)\s*\]|\.\s*([A-Za-z_]\w*))\s*\(")
#: the ``__getattribute__`` of types whose attribute reads are plain (an instance's ``__dict__`` first)
_PLAIN_GETATTR: frozenset[Any] = frozenset({object.__getattribute__, types.SimpleNamespace.__getattribute__})
#: type -> whether its instances' ``__dict__`` is the interpreter's own slot (reading it runs no code); weak, as
#: a program's class (a custom Function's node class) reaches the program's namespace
_PLAIN_DICT: weakref.WeakKeyDictionary[type, bool] = weakref.WeakKeyDictionary()


def held_calls(code: str) -> tuple[tuple[str, int | str], ...]:
    """What a statement with this text calls from a container or an instance: ``(name, index)`` for
    ``name[index](...)``, ``(name, attribute)`` for ``name.attribute(...)``."""
    out: dict[tuple[str, int | str], None] = {}
    for name, index, attr in _HELD_CALL.findall(code):
        if name not in _KEYWORDS:
            out[(name, int(index)) if index else (name, attr)] = None
    return tuple(out)


def _own_dict(value: Any) -> dict[str, Any] | None:
    """``value.__dict__`` when reading it and then an attribute from it is what Python's attribute read does
    first and runs no code of the program; else None."""
    kind = type(value)
    plain = _PLAIN_DICT.get(kind)
    if plain is None:
        slot = None
        for klass in kind.__mro__:
            if "__dict__" in vars(klass):
                slot = vars(klass)["__dict__"]
                break
        plain = _PLAIN_DICT[kind] = (isinstance(slot, (types.GetSetDescriptorType, types.MemberDescriptorType))
                                     and kind.__getattribute__ in _PLAIN_GETATTR)
    if not plain:
        return None
    d = value.__dict__
    return d if type(d) is dict else None


_NOTHING = object()


def _held_item(value: Any, key: int | str) -> Any:
    """``value[key]`` of a list or tuple, or an instance's own attribute ``key``, where reading it runs no code
    of the program; else ``_NOTHING``."""
    if type(key) is int:
        if type(value) not in (list, tuple) or not -len(value) <= key < len(value):
            return _NOTHING
        return value[key]
    if issubclass(type(value), types.ModuleType):
        return _NOTHING  # ``torch.relu_(x)``, ``nn.init.zeros_(w)``: the text tells those
    d = _own_dict(value)
    return _NOTHING if d is None or key not in d else d[key]


_CO_OPTIMIZED = 0x1
#: the operator module's in-place functions (``from operator import imul``)
_OPERATOR_INPLACE = frozenset({"iadd", "iand", "iconcat", "ifloordiv", "ilshift", "imatmul", "imod", "imul", "ior",
                               "ipow", "irshift", "isub", "itruediv", "ixor", "setitem"})


def _writes_in_place(value: Any, filename: str, depth: int = 0) -> bool:
    kind = type(value)
    if kind in _BUILTIN_CALLS:
        name = value.__name__
        return _inplace_name(name) or name in _OPERATOR_INPLACE and getattr(value, "__module__", None) == "_operator"
    if kind is _FunctionType:
        code = value.__code__
        if code.co_name == "<lambda>" and code.co_filename == filename:
            known = _LAMBDA_WRITES.get(id(code))
            if known is None or known[0] is not code:
                known = _LAMBDA_WRITES[id(code)] = (code, any(map(_inplace_name, code.co_names)))
            return known[1]
        module = value.__module__ or ""
        return (module == "torch" or module.startswith("torch.")) and _inplace_name(code.co_name)
    if depth > 2:
        return False
    if kind is functools.partial:
        return _writes_in_place(value.func, filename, depth + 1)
    if kind is types.MethodType:
        return _writes_in_place(value.__func__, filename, depth + 1)
    if issubclass(kind, torch.nn.Module):
        forward = value.__dict__.get("forward")
        if forward is None and (vars(kind).get("__module__") or "").startswith("torch."):
            return False  # torch's own module class: its forward is heard by the module hooks
        if forward is None:
            for klass in kind.__mro__:
                forward = vars(klass).get("forward")
                if forward is not None:
                    break
        return forward is not None and _writes_in_place(forward, filename, depth + 1)
    return False


#: statement text that may replace or zero ``.grad`` inside torch's own code (``opt.zero_grad()``), or write
#: the values of the tensors that have a ``.grad`` (``opt.step()``: a fused optimizer leaves their versions alone)
_GRADS = re.compile(r"zero_grad|(\bstep\s*\()")


def grads_may_change(code: str) -> str:
    """``"grads"`` when a statement with this text may change ``.grad`` of tensors it does not name,
    ``"values"`` when it may also write the values of those tensors (an optimizer's step), else ``""``."""
    found = _GRADS.search(code)
    return "" if found is None else "values" if found.group(1) else "grads"
