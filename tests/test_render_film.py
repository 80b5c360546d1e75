"""The film: one layout for a whole trace, frames that reveal and relabel it."""

from __future__ import annotations

import importlib
import json
import re
import xml.etree.ElementTree as ET

import pytest

import gradtrace
from gradtrace import trace_code
from gradtrace.render.film import film, film_dot

from real_traces import traced
from render_cases import check_golden, evil_trace

SVG = "{http://www.w3.org/2000/svg}"


def groups(svg: str) -> dict[str, ET.Element]:
    root = ET.fromstring(svg)
    return {g.get("id", ""): g for g in root.iter(f"{SVG}g") if g.get("id")}


def test_film_dot_golden(request):
    check_golden(request, "rebind_film.dot", film_dot(traced("rebind")))


def test_every_frame_element_is_in_the_one_svg():
    f = film(traced("rebind"))
    assert f["schema"] == "gradtrace.film" and f["version"] == 2
    ids = groups(f["svg"])
    for frame in f["frames"]:
        assert set(frame["visible"]) <= set(ids)
        assert set(frame["classes"]) <= set(ids)


@pytest.mark.parametrize("engine", ["dot", "graphviz-pure"])
def test_rows_match_svg_text_slots(monkeypatch, engine):
    """The i-th row of a box replaces the i-th <text> of its group, in every frame, with either binary."""
    monkeypatch.setenv("GRADTRACE_DOT", engine)
    f = film(traced("mutate"))
    ids = groups(f["svg"])
    for frame in f["frames"]:
        for dom, ref in frame["texts"].items():
            slots = list(ids[dom].iter(f"{SVG}text"))
            assert len(f["rows"][ref]) == len(slots), dom


def test_rebinding_moves_the_arrow_and_keeps_the_object():
    trace = traced("rebind")
    f = film(trace)
    i = next(k for k, s in enumerate(trace) if s.events_of("rebind"))
    before, after = (f["frames"][f["steps"][k]["frame"]] for k in (i - 1, i))
    assert "gt-e-name-name1-t1" in before["visible"] and "gt-e-name-name1-t1" not in after["visible"]
    assert "gt-e-name-name1-t2" in after["visible"]
    assert "gt-t1" in after["visible"]  # old object still there, held by the graph
    assert "gt-m-unnamed" in after["classes"]["gt-t1"]
    assert f["steps"][i]["events"][-1].startswith("x now names t2; t1 is unchanged and still held by n1")


def test_mutation_frame_marks_and_relabels():
    trace = traced("mutate")
    f = film(trace)
    i = next(k for k, s in enumerate(trace) if s.events_of("mutate"))
    frame = f["frames"][f["steps"][i]["frame"]]
    event = trace[i].events_of("mutate")[0]
    assert "gt-m-mutated" in frame["classes"][f"gt-{event.tensor}"]  # type: ignore[union-attr]
    head = f["rows"][frame["texts"][f"gt-{event.tensor}"]][0][0]  # type: ignore[union-attr]
    assert head.endswith(f"v{event.version_after}")  # type: ignore[union-attr]
    node, _ = event.stale[0]  # type: ignore[union-attr]
    rows = f["rows"][frame["texts"][f"gt-{node}"]]
    assert any(cls == "stale" for _, cls in rows)
    assert f["steps"][i]["predictions"][0].startswith("backward() from c will fail")
    detail = f["details"][f["steps"][i]["details"][f"gt-{node}"]]
    assert any("stale" in value for _, value in detail["fields"])


def test_identical_frames_are_stored_once():
    trace = trace_code("import torch\nx = torch.ones(2, requires_grad=True)\nn = 1\nn = 2\nn = 3\n")
    f = film(trace)
    refs = [s["frame"] for s in f["steps"]]
    assert refs[1] != refs[2]  # step 1 marks x's tensor as new
    assert refs[2] == refs[3] == refs[4]  # n = ... changes nothing in the picture
    assert len(f["frames"]) == len(set(refs)) == 3


def test_backward_pairs_point_at_neighbouring_steps():
    trace = traced("forum")
    f = film(trace)
    assert [(b["step"], b["before"]) for b in f["backward"]] == [(len(trace) - 1, len(trace) - 2)]


def test_long_trace_is_laid_out_in_few_sheets_by_place():
    src = "import torch\nx = torch.tensor(1., requires_grad=True)\nfor i in range(300):\n    y = x * i\n"
    trace = trace_code(src)
    assert len(trace) > 600
    f = film(trace)
    # every pass makes new objects; by place, the same few pictures come back
    assert 1 <= len(f["sheets"]) <= 8 and len(f["steps"]) == len(trace)
    assert all(sheet.count("<svg") == (1 if sheet else 0) for sheet in f["sheets"])  # "" for a step with nothing
    assert {s["sheet"] for s in f["steps"]} == set(range(len(f["sheets"])))
    assert f["svg"] == f["sheets"][0]


def test_film_is_strict_json_and_keeps_payloads_as_data():
    f = film(evil_trace())
    text = json.dumps(f, allow_nan=False)
    assert json.loads(text) == f
    root = ET.fromstring(f["svg"])
    assert not [el for el in root.iter() if el.tag.replace(SVG, "") in {"img", "script", "a", "foreignObject"}]


def test_film_mimebundle_is_text_and_sandboxed_page():
    f = film(traced("forum"))
    bundle = f._repr_mimebundle_()
    assert bundle["text/plain"] == f"<gradtrace film of forum.py: {len(traced('forum'))} steps>"
    assert bundle["text/html"].startswith('<iframe sandbox="allow-scripts" srcdoc="&lt;!DOCTYPE html&gt;')
    assert "<script" not in bundle["text/html"]


def test_a_big_loop_is_filmed_folded_by_place_in_few_layouts():
    from gradtrace.render.fold import MAX_NODES

    n = MAX_NODES + 50
    source = f"import torch\nh = torch.ones(1, requires_grad=True)\nfor _ in range({n}):\n    h = h * 1.0001\n"
    ns: dict = {}
    trace = gradtrace.trace_code(source, ns)
    f = film(trace)
    own = {s["sheet"] for s in f["steps"]}  # the folded pictures' sheets (the others hold unfolded views)
    assert len(own) < 10 < len(trace.steps)
    assert own == set(range(len(own))) and {v["sheet"] for v in f["views"]} == set(range(len(own), len(f["sheets"])))
    last = f["steps"][-1]
    assert 0 <= last["sheet"] < len(f["sheets"])
    frame = f["frames"][last["frame"]]
    texts = [f["rows"][ref][0][0] for ref in frame["texts"].values()]
    # the folded block counts the chain's nodes as torch made them
    chain, node = 0, ns["h"].grad_fn
    while node is not None and node.name() == "MulBackward0":
        chain, node = chain + 1, node.next_functions[0][0]
    assert any(t.startswith(f"× {chain:,}: MulBackward0") for t in texts)
    svg_ids = set(re.findall(r'<g id="([^"]+)"', f["sheets"][last["sheet"]].replace("&#45;", "-")))
    assert set(frame["visible"]) <= svg_ids


MLP_LOOP = """\
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(32, 8)
y = torch.randn(32, 1)
for i in range(100):
    opt.zero_grad()
    pred = model(x)
    loss = torch.nn.functional.mse_loss(pred, y)
    loss.backward()
    opt.step()
"""


@pytest.fixture(scope="module")
def mlp_loop():
    return trace_code(MLP_LOOP, {})


def modules():
    """The film and scene modules (``gradtrace.render.film`` is also the name of a function there)."""
    return importlib.import_module("gradtrace.render.film"), importlib.import_module("gradtrace.render.scene")


def _counting(monkeypatch, module, name: str) -> list[int]:
    """Count the calls of ``module.name`` (the real function still runs)."""
    calls = [0]
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_long_loop_draws_a_box_per_distinct_record_not_per_step(mlp_loop, monkeypatch):
    """600 steps: a box's rows are made once per record (and per step that marks it), and are the same rows."""
    film_mod, scene_mod = modules()

    trace = mlp_loop
    keys = importlib.import_module("gradtrace.render.layout").name_keys(trace)
    plain = [scene_mod.scene(step, name_keys=keys) for step in trace.steps]  # no memo: every box made anew
    tensor_rows = _counting(monkeypatch, scene_mod, "tensor_rows")
    node_rows = _counting(monkeypatch, scene_mod, "node_rows")
    scenes = film_mod.film_scenes(trace)
    assert scenes == plain
    records = {id(r) for s in trace.steps for r in [*s.tensors.values(), *s.nodes.values()]}
    marked = sum(1 for sc in plain for b in sc.boxes if b.marks and b.group != "name")
    drawn = sum(1 for sc in plain for b in sc.boxes if b.group != "name")
    assert len(trace) > 600
    assert tensor_rows[0] + node_rows[0] <= len(records) + marked
    assert tensor_rows[0] + node_rows[0] < drawn / 2


def test_a_long_loop_makes_each_row_frame_and_detail_once(mlp_loop, monkeypatch):
    """Rows, frames and details are compared by value once per distinct box, not encoded at every step."""
    layout_mod, details_mod = (importlib.import_module(f"gradtrace.render.{m}") for m in ("layout", "details"))
    classes = _counting(monkeypatch, layout_mod, "box_classes")
    details = [_counting(monkeypatch, details_mod, f) for f in ("_tensor_detail", "_node_detail")]
    f = film(mlp_loop)
    texts = sum(len(f["frames"][s["frame"]]["texts"]) for s in f["steps"])
    shown = sum(len(s["details"]) for s in f["steps"])
    assert classes[0] < texts / 3
    assert details[0][0] + details[1][0] < shown / 3
    # each table holds distinct entries, and every step points into it
    for table in ("rows", "frames", "details"):
        encoded = [json.dumps(x, sort_keys=True) for x in f[table]]
        assert len(set(encoded)) == len(encoded), table
    assert all(0 <= s["frame"] < len(f["frames"]) for s in f["steps"])


def test_a_node_output_out_of_the_picture_is_said_to_be():
    # ``del h``: MulBackward0's output h is freed, yet its node is shown under y;
    # the detail panel named that tensor as if the picture showed it. (UnbindBackward0, of ``for v in x:``,
    # names the v the step shows: another of its outputs once v moves on.)
    source = ("import torch\nx = torch.tensor([1., 4.], requires_grad=True)\n"
              "for v in x:\n    h = v * 2\n    y = h.sum()\n    del h\n")
    trace = trace_code(source, {})
    f = film(trace)
    said = set()
    for i, step in enumerate(trace):
        for nid, node in step.nodes.items():
            if node.output is None or f"gt-{nid}" not in f["steps"][i]["details"]:
                continue
            detail = f["details"][f["steps"][i]["details"][f"gt-{nid}"]]
            (value,) = [v for k, v in detail["fields"] if k == "output of forward"]
            shown = node.output in step.tensors
            assert value == node.output if shown else value == f"{node.output} (not in this step's picture)"
            assert shown or node.name != "UnbindBackward0"
            said.add(shown)
    assert said == {True, False}
