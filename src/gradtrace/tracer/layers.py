"""A step's tensors and nodes as the previous step's plus this step's changes (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

A long chain shows thousands of nodes and changes one of them per statement;
copying every step's dict would cost (in time and memory) the whole picture per
statement. A :class:`Layered` mapping holds only what its step changed, on top
of the previous step's mapping, and builds its plain dict the first time it is
read (from the nearest earlier step already built, so reading the steps in
order costs one copy each). Reads see an ordinary read-only mapping, in id
order (``t2`` before ``t10``), equal to the dict the step would have copied.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

V = TypeVar("V")

#: a change touching at least this share of the entries is stored as a plain copy
_COPY_SHARE = 0.5


def _num(key: str) -> int:
    return int(key[1:])


class Layered(Mapping[str, V], Generic[V]):
    """A read-only mapping ``id -> info``: ``base`` with ``put`` set and ``gone`` removed."""

    __slots__ = ("_base", "_flat", "_gone", "_len", "_put", "__weakref__")

    def __init__(self, base: Layered[V] | None, put: dict[str, V], gone: tuple[str, ...], size: int,
                 flat: dict[str, V] | None = None) -> None:
        self._base = base
        self._put = put
        self._gone = gone
        self._len = size
        self._flat = flat

    @classmethod
    def after(cls, prev: Mapping[str, V] | None, live: dict[str, V], touched: Iterable[str]) -> Layered[V]:
        """The mapping equal to ``live`` (sorted by id), given that it differs from ``prev`` only at ``touched``.

        ``prev`` None (or not a :class:`Layered`): a plain copy of ``live``.
        """
        touched = list(touched)
        size = len(live)
        if not isinstance(prev, Layered) or len(touched) >= _COPY_SHARE * max(size, 1):
            return cls(None, {}, (), size, dict(live))
        put = {k: live[k] for k in touched if k in live}
        gone = tuple(k for k in touched if k not in live)
        return cls(prev, put, gone, size)

    @property
    def built(self) -> bool:
        """True once the plain dict exists (tests check that recording builds none)."""
        return self._flat is not None

    def _dict(self) -> dict[str, V]:
        flat = self._flat
        if flat is not None:
            return flat
        layers: list[Layered[V]] = []
        v: Layered[V] | None = self
        while v is not None and v._flat is None:
            layers.append(v)
            v = v._base
        out: dict[str, V] = {} if v is None else dict(v._flat or {})
        hi = _num(next(reversed(out))) if out else -1
        in_order = True
        for layer in reversed(layers):
            for k in layer._gone:
                out.pop(k, None)
            for k, x in layer._put.items():
                if k not in out:
                    n = _num(k)
                    if n < hi:
                        in_order = False
                    else:
                        hi = n
                out[k] = x
        if not in_order:
            out = dict(sorted(out.items(), key=lambda kv: _num(kv[0])))
        self._flat = out  # the layers stay: another thread may be reading them to build a later step
        return out

    def __getitem__(self, key: str) -> V:
        return self._dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return self._len

    def __contains__(self, key: object) -> bool:
        return key in self._dict()

    def get(self, key: str, default: Any = None) -> Any:
        return self._dict().get(key, default)

    def keys(self) -> Any:
        return self._dict().keys()

    def values(self) -> Any:
        return self._dict().values()

    def items(self) -> Any:
        return self._dict().items()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Layered):
            other = other._dict()
        if isinstance(other, Mapping):
            return self._dict() == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._dict())

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self._dict(),))  # saved as a plain dict: loading needs no tracer
