"""Every lesson notebook in notebooks/ runs top to bottom in a fresh kernel, asserting its own numbers.

Each notebook checks its key figures against PyTorch in code cells and exercises its
quiz cells; any error in any cell fails the test. Committed notebooks carry no outputs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
#: what one stepper may add to a saved lesson (its output, stored once)
STEPPER_LIMIT = 150_000


def test_lessons_are_numbered_in_order():
    numbers = [int(path.name[:2]) for path in LESSONS]
    assert numbers == list(range(1, len(LESSONS) + 1))
    assert len(LESSONS) >= 7


@pytest.mark.parametrize("path", LESSONS, ids=[path.stem for path in LESSONS])
def test_lesson_committed_without_outputs(path: Path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path.name}: clear outputs before committing"


@pytest.mark.parametrize("path", LESSONS, ids=[path.stem for path in LESSONS])
def test_lesson_uses_public_api_only(path: Path):
    nb = nbformat.read(path, as_version=4)
    source = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    assert "import gradtrace" in source
    assert "gradtrace._" not in source and "from gradtrace." not in source
    for module in ("tracer", "render", "model", "notebook"):
        assert f"gradtrace.{module}" not in source


@pytest.mark.slow
@pytest.mark.parametrize("path", LESSONS, ids=[path.stem for path in LESSONS])
def test_lesson_runs_top_to_bottom(path: Path):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    # the kernel imports gradtrace from this checkout's src/, whatever else is installed
    path_var = os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH", "")) if p)
    client.execute(env={**os.environ, "PYTHONPATH": path_var})  # raises CellExecutionError on the first failing cell
    ran = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert all(cell.execution_count is not None for cell in ran)
    # every stepper is stored once, in one output, and small enough to keep a saved lesson light
    steppers = [cell for cell in ran if cell.source.startswith("%%gradtrace")]
    sizes = []
    for cell in steppers:
        shown = [o for o in cell.outputs if "gt-embed" in json.dumps(o.get("data", {}))]
        assert len(shown) == 1, f"{path.name}: a %%gradtrace cell shows {len(shown)} steppers"
        sizes.append(len(nbformat.writes(nbformat.v4.new_notebook(cells=[cell]))) - len(
            nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell.source)]))))
    over = [size for size in sizes if size > STEPPER_LIMIT]
    assert not over, f"{path.name}: steppers add {sizes} bytes to the saved notebook (limit {STEPPER_LIMIT})"
