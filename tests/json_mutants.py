"""Damaged copies of real saved traces, for the tests of the JSON reader.

Each mutant is made from a real trace's document by one to three seeded changes: a key
deleted, a value replaced by one of another type, a row reference made negative or past
the table's end, a string replaced by a wrong one (an unknown event kind, a bad id), a
value moved from elsewhere in the document, a deep nest of lists, or the text cut short.
The same seed gives the same mutants on every run.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

#: values of every JSON type, and numbers a reader must not trust
ODD_VALUES: tuple[Any, ...] = (None, True, False, 0, 1, -1, -7, 2**31, 10**30, 1.5, -0.0, "", "x", "nan", "-inf",
                               "(1+2j)", "t999", "n1", [], [1], ["a", "b"], [[]], {}, {"kind": "bind"})
WRONG_STRINGS = ("", "bogus", "t", "n", "t-1", "n0x", "t1 ", "Leaf", "ALIVE", "sparse_weird", "create ", "\u2028")

Path = tuple[Any, ...]


def _paths(doc: Any) -> list[Path]:
    """Every place in ``doc`` (a key of an object or a position in a list), walked without recursion."""
    out: list[Path] = []
    todo: list[tuple[Path, Any]] = [((), doc)]
    while todo:
        path, value = todo.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in items:
            out.append((*path, key))
            todo.append(((*path, key), child))
    return out


def _parent(doc: Any, path: Path) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


def _rows(doc: dict[str, Any], table: str) -> int:
    rows = doc.get(table)
    return len(rows) if isinstance(rows, list) and rows else 3


def _nest(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _mutate(doc: Any, rng: random.Random, paths: list[Path]) -> None:
    path = rng.choice(paths)
    parent, key = _parent(doc, path), path[-1]
    old = parent[key]
    how = rng.randrange(7)
    if len(path) > 2 and path[-3] == "attrs" and path[-1] == 1:  # free text PyTorch wrote: any string is valid
        how = 6
    if how == 0:
        del parent[key]
    elif how == 1:
        parent[key] = rng.choice(ODD_VALUES)
    elif how == 2 or (how == 3 and isinstance(old, int) and not isinstance(old, bool)):
        parent[key] = rng.choice((-1, -2, -_rows(doc, "tensors"), 10**6, _rows(doc, "nodes")))
    elif how == 3 or (how == 4 and isinstance(old, str)):
        parent[key] = rng.choice(WRONG_STRINGS)
    elif how == 4:
        other = rng.choice(paths)
        parent[key] = json.loads(json.dumps(_parent(doc, other)[other[-1]]))
    elif how == 5:
        parent[key] = _nest(rng.choice((3, 40, 400)))
    else:
        parent[key] = [old] if rng.random() < 0.5 else {"value": old}


def mutants(documents: list[dict[str, Any]], count: int, seed: int = 2026) -> Iterator[tuple[int, str]]:
    """``count`` damaged JSON texts (with their number) made from ``documents``."""
    rng = random.Random(seed)
    texts = [json.dumps(d) for d in documents]
    for number in range(count):
        which = rng.randrange(len(texts))
        text = texts[which]
        if rng.random() < 0.04:  # the file cut short
            yield number, text[: rng.randrange(len(text))]
            continue
        doc = json.loads(text)
        paths = _paths(doc)
        for _ in range(rng.choice((1, 1, 2, 3))):
            _mutate(doc, rng, paths)
            paths = _paths(doc)
        try:
            yield number, json.dumps(doc)
        except RecursionError:  # nests moved into nests: deeper than Python writes; the parser's own limit is tested
            yield number, text[:-1]
