"""Reading the learner's objects without trusting them (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

A learner's namespace may hold anything: keys that are not strings, objects
whose ``__class__``, ``__repr__`` or ``__str__`` raise, exceptions that cannot
be printed, names with lone surrogates, modules whose parameters have no shape
yet (``nn.LazyLinear``). None of these may stop a trace. Every read here either
succeeds or gives ``<unreadable: reason>``; type tests use ``type(obj)``, which
no object can make raise, never ``obj.__class__``.
"""

from __future__ import annotations

import sys
import types
import weakref
from collections.abc import Iterator
from typing import Any

import torch

MAX_TEXT = 2000
_LAZY: Any = getattr(torch.nn.parameter, "UninitializedTensorMixin", ())  # () where torch has none


def clean(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udcff`` escapes, so it encodes to UTF-8 anywhere."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def unreadable(exc: BaseException, what: str) -> str:
    """``<unreadable: __str__ raised RuntimeError>``: never raises."""
    return f"<unreadable: {what} raised {_type_name(exc)}>"


def _type_name(obj: Any) -> str:
    name = getattr(type(obj), "__name__", None)
    return clean(name) if isinstance(name, str) else "an object"


def safe_str(obj: Any) -> str:
    """``str(obj)``, or ``<unreadable: ...>`` if that raises or gives no string."""
    try:
        text = str(obj)
    except Exception as exc:
        return unreadable(exc, "__str__")
    if type(text) is not str:  # a str subclass may carry its own odd methods
        try:
            text = str.__str__(text)
        except Exception as exc:
            return unreadable(exc, "__str__")
    return clean(text)


def safe_repr(obj: Any) -> str:
    """``repr(obj)``, or ``<unreadable: ...>`` if that raises."""
    try:
        text = repr(obj)
    except Exception as exc:
        return unreadable(exc, "__repr__")
    if type(text) is not str:
        text = str.__str__(text)
    return clean(text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…")


def exception_message(exc: BaseException) -> str:
    """What Python prints after ``Type:`` for ``exc``; never raises."""
    return safe_str(exc)


def is_a(obj: Any, cls: type | tuple[type, ...]) -> bool:
    """``isinstance`` by the object's real type: an object cannot lie or raise through ``__class__``."""
    return issubclass(type(obj), cls)


def is_lazy(t: Any) -> bool:
    """True for a parameter or buffer that has no shape yet (``nn.LazyLinear`` before its first call)."""
    return is_a(t, _LAZY)


#: a class made by a ``class`` statement (not one of C, as ``int``)
_HEAPTYPE = 1 << 9
_type_dict = type.__dict__["__dict__"].__get__  # a class's own namespace, read without its metaclass
_MEMBER = types.MemberDescriptorType
#: the module names a class defined by the learner's code has: a script's or notebook's, or code run without one
_LEARNER_MODULES = ("__main__", "builtins")


def is_learner_object(obj: Any) -> bool:
    """True for an instance of a class the learner's code defined (``class Linear: ...`` in a script, a
    notebook or a traced source), whose attributes may hold tensors: ``p.w``. Tensors, modules, lists and
    dicts are told apart before; a class of a library (a file-backed module) is not the learner's."""
    cls = type(obj)
    if not cls.__flags__ & _HEAPTYPE or issubclass(cls, (type, BaseException)):
        return False
    try:
        module = _type_dict(cls).get("__module__")
    except Exception:
        return False
    if type(module) is not str:
        return False
    if module in _LEARNER_MODULES:
        return True
    found = sys.modules.get(module)  # (code run with a ``__name__`` of its own: no module, or one without a file)
    return found is None or "__file__" not in getattr(found, "__dict__", {"__file__": None})


def object_items(obj: Any) -> list[tuple[str, Any]]:
    """An object's own attributes, from its ``__dict__`` and its ``__slots__``, read without running its code
    (no ``__getattr__``, no property); names starting with ``_`` are left out, as for any name."""
    out: list[tuple[str, Any]] = []
    try:
        own = object.__getattribute__(obj, "__dict__")
    except Exception:
        own = None
    if type(own) is dict:
        out += [(k, v) for k, v in list(own.items()) if type(k) is str and not k.startswith("_")]
    cls = type(obj)
    slots = _slots_of(cls)
    if slots:
        mro = cls.__mro__
        for k, at in slots:
            try:
                out.append((k, _type_dict(mro[at])[k].__get__(obj, mro[at])))
            except Exception:  # a slot not set
                continue
    return out


#: a class's slots as (name, the place in its ``__mro__`` of the class that made it): names and numbers only,
#: so that the class is not kept alive by its entry
_SLOTS: weakref.WeakKeyDictionary[type, tuple[tuple[str, int], ...]] = weakref.WeakKeyDictionary()


def _slots_of(cls: type) -> tuple[tuple[str, int], ...]:
    found = _SLOTS.get(cls)
    if found is None:
        slots = []
        for at, owner in enumerate(cls.__mro__[:-1]):
            try:
                members = _type_dict(owner)
            except Exception:
                continue
            slots += [(k, at) for k, d in list(members.items())
                      if type(d) is _MEMBER and type(k) is str and not k.startswith("_")]
        found = _SLOTS[cls] = tuple(slots)  # (a class's slots are fixed when it is made)
    return found


def name_items(ns: Any) -> Iterator[tuple[str, Any]]:
    """The ``(name, value)`` pairs of a namespace whose keys are names (strings); others are skipped.

    A name with a lone surrogate comes back escaped (``a\\udcff``), the way ``--text`` shows it.
    """
    try:
        items = list(ns.items())
    except Exception:
        return
    for key, value in items:
        if type(key) is str:
            yield clean(key), value
        elif is_a(key, str):
            yield clean(str.__str__(key)), value


def named_parameters(module: Any, prefix: str = "") -> list[tuple[str, torch.Tensor]]:
    """A module's parameters with their shapes known; lazy ones (no shape yet) are left out."""
    try:
        found = list(module.named_parameters(prefix=prefix) if prefix else module.named_parameters())
    except Exception:
        return []
    return [(clean(n), p) for n, p in found if is_a(p, torch.Tensor) and not is_lazy(p)]


def named_buffers(module: Any) -> list[tuple[str, torch.Tensor]]:
    """A module's buffers (running statistics, ``register_buffer``), lazy ones left out."""
    try:
        found = list(module.named_buffers())
    except Exception:
        return []
    return [(clean(n), b) for n, b in found if is_a(b, torch.Tensor) and not is_lazy(b)]


def named_modules(module: Any, prefix: str) -> list[tuple[str, Any]]:
    try:
        return [(clean(n), m) for n, m in module.named_modules(prefix=prefix)]
    except Exception:
        return []
