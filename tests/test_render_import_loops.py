"""The render layer's modules import one another in one direction: no module of it reaches back to itself.

The model's convenience views (``str(step)``, a trace shown in a notebook) import the renderer lazily;
those are allowed back edges of the layer contract (see pyproject.toml) and are set aside here.
"""

from __future__ import annotations

import pytest

grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (pip install -e '.[test]')")


def _graph():
    g = grimp.build_graph("gradtrace", cache_dir=None)
    for imported in list(g.find_modules_directly_imported_by("gradtrace.model")):
        if imported.startswith(("gradtrace.render", "gradtrace.notebook")):
            g.remove_import(importer="gradtrace.model", imported=imported)
    return g


def test_no_import_loop_inside_render():
    g = _graph()
    mods = sorted(m for m in g.modules if m.startswith("gradtrace.render."))
    loops = [(g.find_shortest_chain(a, b), g.find_shortest_chain(b, a)) for a in mods for b in mods
             if a < b and g.find_shortest_chain(a, b) and g.find_shortest_chain(b, a)]
    assert loops == []

