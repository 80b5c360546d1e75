"""Deterministic ids for tensor objects and backward nodes (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

Tensor ids live in a side table keyed by the object's address and checked
through a weak reference, so tracing adds nothing to the learner's tensors.
Node ids are stamped into ``node.metadata`` (built-in nodes accept neither
attributes nor weak references) under a token unique to one trace, so the
same program traced twice gets the same ids. ``AccumulateGrad`` nodes are
recreated by PyTorch when no graph holds them, so they are keyed by their leaf.
A node's stamp dies with the node: a weak reference to it (:meth:`Ids.life`)
tells whether the node is still alive.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any

_KEY = "gradtrace"
_tokens = itertools.count(1)


class _Stamp:
    """A node's id in one trace, kept in its ``metadata``: freed with the node."""

    __slots__ = ("__weakref__", "nid", "token")

    def __init__(self, token: int, nid: str) -> None:
        self.token, self.nid = token, nid

    def __repr__(self) -> str:
        return f"<gradtrace {self.nid}>"


class Ids:
    """Hands out ``t1, t2, ...`` and ``n1, n2, ...`` in first-seen order."""

    def __init__(self) -> None:
        self.token = next(_tokens)
        self._by_addr: dict[int, tuple[weakref.ref[Any], str]] = {}
        self._refs: dict[str, weakref.ref[Any]] = {}
        self._tensors = 0
        self._nodes = 0
        self._acc: dict[str, str] = {}

    # -- tensors ---------------------------------------------------------
    def tensor(self, t: Any) -> str | None:
        """The id of ``t`` if it has one, else None."""
        entry = self._by_addr.get(id(t))
        if entry is not None and entry[0]() is t:
            return entry[1]
        return None

    def stamp(self, t: Any) -> tuple[str, bool]:
        """The id of ``t``, giving it a new one if needed; True when new."""
        tid = self.tensor(t)
        if tid is not None:
            return tid, False
        self._tensors += 1
        tid = f"t{self._tensors}"
        # No callback on the weak reference: Python code run when a tensor dies can
        # swallow a Ctrl-C ("Exception ignored in ..."). A dead entry is harmless
        # (lookups check the referent) and is replaced when its address is reused.
        ref = weakref.ref(t)
        self._by_addr[id(t)] = (ref, tid)
        self._refs[tid] = ref
        return tid, True

    def obj(self, tid: str) -> Any:
        """The live tensor with id ``tid``, or None once it is gone."""
        ref = self._refs.get(tid)
        return None if ref is None else ref()

    @property
    def tensor_count(self) -> int:
        """How many tensor ids were handed out: ids ``t1`` to ``t<count>``."""
        return self._tensors

    # -- nodes -----------------------------------------------------------
    def node(self, node: Any) -> str | None:
        if type(node).__name__ == "AccumulateGrad":
            leaf = self.tensor(node.variable)
            return None if leaf is None else self._acc.get(leaf)
        stamp = node.metadata.get(_KEY)
        if type(stamp) is _Stamp and stamp.token == self.token:
            return stamp.nid
        return None

    def life(self, node: Any) -> weakref.ref[Any] | None:
        """A weak reference that dies with ``node`` (stamped, not an ``AccumulateGrad``), else None."""
        try:
            stamp = node.metadata.get(_KEY)
        except Exception:
            return None
        return weakref.ref(stamp) if type(stamp) is _Stamp and stamp.token == self.token else None

    def stamp_node(self, node: Any) -> tuple[str, bool]:
        if type(node).__name__ == "AccumulateGrad":
            leaf, _ = self.stamp(node.variable)
            nid = self._acc.get(leaf)
            if nid is not None:
                return nid, False
            nid = self._new_node()
            self._acc[leaf] = nid
            return nid, True
        meta = node.metadata
        stamp = meta.get(_KEY)
        if type(stamp) is _Stamp and stamp.token == self.token:
            return stamp.nid, False
        nid = self._new_node()
        meta[_KEY] = _Stamp(self.token, nid)
        return nid, True

    def _new_node(self) -> str:
        self._nodes += 1
        return f"n{self._nodes}"
