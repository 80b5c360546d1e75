"""One rule set for the learner's traceback: traced code fails with the frames a plain run of it shows.

The command (``learner_traceback``, text), the ``%%gradtrace`` magic and a script's own
``sys.excepthook`` (``learner_tb``, the traceback chain) all use :func:`gradtrace.run.learner_frames`.
Each case runs the same failing program plainly and under the tracer and compares the frames.
"""

from __future__ import annotations

import traceback

import pytest

from gradtrace.run import learner_tb, learner_traceback, run_traced

#: F.relu is written in Python and checks for torch function modes: ``inplace=True`` runs its statement
#: under the tracer's mode, so it calls handle_torch_function, the mode, then itself again (a detour a plain
#: run does not take).
PROGRAMS = {
    "through a Python torch function": (
        "import torch\nimport torch.nn.functional as F\n"
        "def f(t):\n    return F.relu(t, inplace=True)\n"
        "y = f(torch.ones(2, requires_grad=True))\n"),
    "in the learner's own function": (
        "import torch\ndef g(t):\n    return t.view(3)\nx = torch.ones(2)\ny = g(x * 2)\n"),
    "a chained error": (
        "import torch\ntry:\n    torch.ones(2).view(3)\nexcept RuntimeError as e:\n"
        "    raise ValueError('bad shape') from e\n"),
}


def plain_failure(source: str, filename: str) -> BaseException:
    try:
        exec(compile(source, filename, "exec"), {"__name__": "__main__"})
    except Exception as exc:
        exc.__traceback__ = exc.__traceback__.tb_next  # this test's own frame, which ran exec
        return exc
    raise AssertionError("the program did not fail")


def frames(tb) -> list[tuple[str, str, int | None]]:
    return [(f.filename, f.name, f.lineno) for f in traceback.extract_tb(tb)]


@pytest.mark.parametrize("where", ["/learner/{}.py", "<ipython-input-7-{}>"])  # a script, a notebook cell
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_traced_traceback_has_the_plain_runs_frames(name, where):
    source, filename = PROGRAMS[name], where.format(name.replace(" ", "_"))
    plain = plain_failure(source, filename)
    traced = run_traced(source, {"__name__": "__main__"}, filename=filename, keep_last=False).exception
    assert type(traced) is type(plain) and str(traced) == str(plain)
    assert learner_traceback(traced) == "".join(traceback.format_exception(plain))
    assert frames(learner_tb(traced.__traceback__)) == frames(plain.__traceback__)
