"""The error's culprits, as the explanation names them, are marked in every rendering."""

from __future__ import annotations

import gradtrace
from gradtrace.explain.errors import explain_error
from gradtrace.render.dot import MARK, step_dot
from gradtrace.render.film import film
from gradtrace.render.scene import scene

from programs import INPLACE_STALE


def failing_step():
    trace = gradtrace.trace_code(INPLACE_STALE, {}, raise_errors=False)
    step = trace.steps[-1]
    (error,) = step.events_of("error")
    return trace, step, explain_error(error, step)


def test_culprits_are_marked_in_the_scene_text_dot_and_film():
    trace, step, explained = failing_step()
    assert explained.kind == "inplace_modified" and explained.culprits
    marked = {b.key for b in scene(step).boxes if "culprit" in b.marks}
    assert marked == set(explained.culprits)
    # the node that saved the value, and the tensor changed in place
    assert any(step.nodes[k].name == "MulBackward0" for k in marked if k in step.nodes)
    assert "involved: " in str(step)
    assert MARK["culprit"][0] in step_dot(step)
    f = film(trace)
    frame = f["frames"][f["steps"][-1]["frame"]]
    assert {k for k, cls in frame["classes"].items() if "gt-m-culprit" in cls} == {"gt-" + k for k in marked}


def test_steps_without_errors_mark_no_culprit():
    trace, _, _ = failing_step()
    assert all("culprit" not in b.marks for s in trace.steps[:-1] for b in scene(s).boxes)
