"""The package's import graph has no circle: each module can be read knowing only the modules below it.

The model's conveniences are registered from above at import time (``model.register_view``), so the
model imports nothing of gradtrace; a circle anywhere (say render -> explain -> render) fails here with
the modules that form it. Imports inside functions count too: they run at some point.
"""

from __future__ import annotations

import grimp


def _circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected groups of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index or not root.startswith("gradtrace"):
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next((c for c in children if c.startswith("gradtrace")), None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_module_of_gradtrace_imports_itself_round_a_circle():
    graph = grimp.build_graph("gradtrace", exclude_type_checking_imports=True)
    assert _circles(graph) == []


def test_a_circle_is_found_when_there_is_one():
    graph = grimp.build_graph("gradtrace", exclude_type_checking_imports=True)
    graph.add_import(importer="gradtrace.model", imported="gradtrace.render.text")  # the model's old lazy import
    assert any("gradtrace.model" in group and "gradtrace.render.text" in group for group in _circles(graph))
