"""The saved-value index of a :class:`~gradtrace.tracer.graph.GraphBook` (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

:class:`SavedBook` files each node that holds an alive saved value under the storage that value
lives in, and notes how to tell when the node dies. A write to a filed storage may change a saved
value unseen (a value no tensor id follows, a write that bumps no version): :meth:`SavedBook.check_untracked`
reads those nodes again. The index is swept of dead nodes as it doubles, so it stays about the size
of the graphs still alive. The graph book owns it and shares its containers (``untracked`` and the
rest); it reads the book's records, stale set and written storages through the book.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .graph import GraphBook

#: the saved-value index is swept for dead nodes once it holds this many (and then each time it doubled)
_SWEEP_MIN = 256


def _always() -> bool:
    return True


#: the life of a node that cannot be told dead (no stamp to watch): kept
_ALWAYS = _always


class SavedBook:
    """Nodes with alive saved values, filed by storage, with their lives (see the module's text)."""

    def __init__(self, book: GraphBook, recheck: Callable[..., bool]) -> None:
        #: reads one node's saved values again (:func:`.graph.recheck_saved`, handed in: it reads the graph's readers)
        self._recheck = recheck
        self.book = book
        #: nodes with an alive saved value, by the storage that value lives in. A write there may change
        #: it unseen: a value no tensor id follows (an object's attribute, a temporary view) goes stale
        #: without :meth:`~.graph.GraphBook.mark_versions` hearing of it, and a write that bumps no version
        #: (``.data``, a norm's running statistics) changes the numbers of any: :meth:`check_untracked`
        #: reads them again
        self.untracked: dict[int | None, set[str]] = {}
        #: node id -> the storages it is filed under in :attr:`untracked`
        self.filed: dict[str, set[int | None]] = {}
        #: nodes with an alive saved value that no tensor id follows
        self.no_id: set[str] = set()
        #: node id -> a weak reference that dies with the node, for each node with an entry in the saved-value
        #: index (the book's ``saved_by``, :attr:`untracked`): a graph dropped without ``backward()`` leaves
        #: none behind
        self.life: dict[str, Any] = {}
        #: how many nodes :attr:`life` may hold before the dead ones are looked for again
        self.sweep_at = _SWEEP_MIN

    def file(self, nid: str, storage: int | None) -> None:
        filed = self.filed.get(nid)
        if filed is None:
            filed = self.filed[nid] = set()
        if storage not in filed:
            filed.add(storage)
            held = self.untracked.get(storage)
            if held is None:
                self.untracked[storage] = {nid}
            else:
                held.add(nid)

    def watch(self, nid: str, node: Any) -> None:
        """Node ``nid`` gets entries in the saved-value index: note how to tell when it dies."""
        if len(self.life) >= self.sweep_at:
            self.sweep()
        life = None if node is None else self.book.ids.life(node)
        self.life[nid] = life if life is not None else _ALWAYS

    def sweep(self) -> int:
        """Drop the saved-value index entries of nodes that died; how many died.

        Called as the index doubles (each entry is looked at a bounded number of times), so it stays
        about the size of the graphs still alive, however many a loop made and dropped. A dead node's
        storage address, filed in :attr:`untracked`, may be a new tensor's: never read for it.
        """
        dead = {nid for nid, life in self.life.items() if life() is None}
        if dead:
            for nid in dead:
                del self.life[nid]
                self.settled(nid)
            self.book.stale -= dead
            self.book._hidden -= dead
            saved_by = self.book.saved_by
            for tid, by in list(saved_by.items()):
                if any(nid in dead for nid, _ in by):
                    kept = [entry for entry in by if entry[0] not in dead]
                    if kept:
                        saved_by[tid] = kept
                    else:
                        del saved_by[tid]
        self.sweep_at = max(_SWEEP_MIN, 2 * len(self.life))
        return len(dead)

    def check_untracked(self, roots: Iterable[Any], written: Iterable[int | None]) -> list[tuple[str, str]]:
        """Saved values a write changed unseen, read again under the grad_fns ``roots``; the newly stale.

        ``written``: the storages the statement wrote in place. Only the nodes of :attr:`untracked`
        filed under one of them are read, through their raw saved slots (``_raw_saved_*``: no
        unpacking, so no version check raises and no learner hook runs); the walk ends once all
        of them were met. A value no tensor id follows goes stale when its version moved; a value
        in a storage of :attr:`dirty` (written, maybe without a version bump) is summarised again.
        """
        stale: list[tuple[str, str]] = []
        want = self._untracked_written(written)
        if not want:
            return stale
        ids, work = self.book.ids, self.book.work
        stack, seen, left = [r for r in roots if r is not None], set(), len(want)
        while stack and left:
            node = stack.pop()
            nid = ids.node(node)
            if nid is None or nid in seen:
                continue
            seen.add(nid)
            work["untracked"] += 1
            stack += [nxt for nxt, _ in node.next_functions if nxt is not None]
            if nid not in want:
                continue
            left -= 1
            info = self.book.nodes.get(nid)
            if info is None or nid in self.book.packed:
                self.settled(nid)
                continue
            if not self._recheck(self.book, node, nid, info, stale):
                self.settled(nid)  # nothing left alive to change
        return stale

    def _untracked_written(self, written: Iterable[int | None]) -> set[str]:
        """The live nodes of :attr:`untracked` filed under a storage in ``written`` (those whose values no id
        follows; all of them for a storage of :attr:`dirty`); the dead ones are let go."""
        dirty = self.book.dirty
        want: set[str] = set()
        untracked, no_id = self.untracked, self.no_id
        for storage in set(written):
            held = untracked.get(storage)
            if held:
                want |= held if storage in dirty else held & no_id
        life = self.life
        for dead in [nid for nid in want if life.get(nid, _ALWAYS)() is None]:  # died: its storage may be reused
            want.discard(dead)
            self.settled(dead)
        return want

    def settled(self, nid: str) -> None:
        """Node ``nid`` has no saved value left that a write could change: no longer filed."""
        self.no_id.discard(nid)
        if nid in self.book._hidden:
            for key in [k for k in self.book._hidden_base if k[0] == nid]:
                del self.book._hidden_base[key]
        for storage in self.filed.pop(nid, ()):
            held = self.untracked.get(storage)
            if held is not None:
                held.discard(nid)
                if not held:
                    del self.untracked[storage]
