"""Code that runs, then is explained: ``gradtrace.explain(root)``, ``gradtrace.quiz`` and ``gradtrace.compare``.

Place in the pipeline: cli | notebook > **live** > render > explain > run > tracer > model.

Each entry point here runs the learner's code (or ``root.backward()``) through
:mod:`gradtrace.run`, then hands what the run recorded to :mod:`gradtrace.explain`,
whose functions only read records. This is the only module where running and
explaining meet; explain and render never import it.

- :func:`walkthrough` (``gradtrace.explain(root)``): runs ``root.backward()`` and
  explains it node by node (:func:`~gradtrace.explain.walkthrough.walkthrough_of`).
- :func:`quiz`: runs a small program; PyTorch's answer becomes the question's answer
  (:mod:`gradtrace.explain.quiz` grades predictions against it).
- :func:`compare`: runs two programs of source code and compares their graphs
  (:func:`gradtrace.explain.compare.compare`).
"""

from __future__ import annotations

import ast
import builtins
import re
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from .explain.compare import GIVEN_LEAF, Comparison
from .explain.compare import compare as compare_records
from .explain.quiz import (
    Answer,
    Question,
    Truth,
    ValueQuestion,
    clean_code,
    error_answer,
    kind_of,
    plain_truth,
    question_from_trace,
    tensor_truth,
    walks,
)
from .explain.walkthrough import Walkthrough, walkthrough_of
from .model import Step, Trace
from .run import Run, backward_traced, run_traced

__all__ = ["compare", "quiz", "walkthrough"]


# --------------------------------------------------------------------------- explain(root)


def walkthrough(root: Any, gradient: Any = None, retain_graph: bool = False, inputs: Any = None, *,
                names: Mapping[str, Any] | None = None, root_name: str | None = None) -> Walkthrough:
    """Run ``root.backward(gradient, retain_graph, inputs=inputs)`` and explain it node by node.

    The call runs under the tracer (see :func:`gradtrace.run.backward_traced`), which
    records the reverse pass as plain data; the explanation is built from that record
    alone (:func:`walkthrough_of`), so its node ids are the ones a trace of ``names``
    shows. ``names`` (for example ``globals()``) maps Python names to tensors so that
    leaves and retained intermediates are called by their names. Raises what
    ``backward()`` raises.
    """
    if not (hasattr(root, "backward") and hasattr(root, "grad_fn")):
        raise TypeError(f"walkthrough() needs a tensor, got {type(root).__name__}")
    step, event, exc = backward_traced(root, gradient, retain_graph, inputs, names=names)
    if exc is not None:
        raise exc
    if event is None:
        raise RuntimeError("backward() ran but gradtrace recorded no reverse pass to explain")
    if root_name is None:
        root_name = next((n for n, v in (names or {}).items() if v is root), None)
    return walkthrough_of(step, event, root_name)


# --------------------------------------------------------------------------- quiz

_QUIZ_FILE = "<quiz>"


def quiz(code: str, ask: str = "x.grad", *, line: int | str | None = None,
         namespace: Mapping[str, Any] | None = None, rtol: float | None = None) -> Question:
    """A question about ``code``, answered by PyTorch when it is made; ``check(answer)`` grades a prediction.

    ``ask`` is an expression to predict (``"x.grad"``), :data:`~gradtrace.explain.quiz.GRAPH_LINES`
    or :data:`~gradtrace.explain.quiz.REBIND_OR_MUTATE` (with ``line``: a line number or the
    line's code). ``torch`` is available to the code without an import; ``namespace`` adds
    names (a shallow copy is used, but tensors in it are shared: a ``backward()`` in the
    code accumulates into their ``.grad``). ``rtol`` overrides the dtype's tolerance for
    values that are not exact whole numbers (down to the dtype's own precision,
    :data:`~gradtrace.explain.quiz.EPS`).
    """
    code = clean_code(code)
    kind = kind_of(ask)
    if kind == "value":
        return ValueQuestion(code, ask.strip(), _answer(code, ask.strip(), namespace), rtol)
    return question_from_trace(code, kind, _run_quiz(code, namespace).trace, line)


def _run_quiz(code: str, namespace: Mapping[str, Any] | None) -> Run:
    return run_traced(code, dict(namespace or {}), filename=_QUIZ_FILE, keep_last=False, import_torch=True)


def _answer(code: str, ask: str, namespace: Mapping[str, Any] | None) -> Answer:
    """Run the code, then evaluate ``ask`` in what it left: PyTorch's answer, with the walkthroughs and warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = _run_quiz(code, namespace)
        if run.exception is not None:  # the learner's code may raise anything: that is the answer
            return error_answer(run.exception, code, run.trace, _warning_texts(caught))
        try:
            value = eval(compile(ask, "<ask>", "eval"), run.namespace)
        except Exception as exc:
            raise ValueError(f"quiz: the code ran, but ask={ask!r} could not be evaluated: "
                             f"{type(exc).__name__}: {exc}") from exc
        truth = truth_of(value)
    return Answer(truth, walks(run.trace), _warning_texts(caught))


def _is_tensor(value: Any) -> bool:
    """A torch tensor, told by what it has (torch itself is the tracer's to import)."""
    return all(hasattr(value, a) for a in ("detach", "tolist", "dtype", "shape", "grad_fn"))


def truth_of(value: Any) -> Truth:
    """PyTorch's answer as plain data: a tensor's values, dtype and shape are read here, once."""
    if _is_tensor(value):
        t = value.detach()
        return tensor_truth(t.tolist(), str(t.dtype).split(".")[-1], tuple(t.shape))
    return plain_truth(value)


def _warning_texts(caught: Iterable[warnings.WarningMessage]) -> tuple[str, ...]:
    seen: list[str] = []
    for w in caught:
        message = re.sub(r"\s*\(Triggered internally at [^)]*\)\s*$", "", str(w.message).strip())
        text = f"{w.category.__name__}: {message}"
        if text not in seen:
            seen.append(text)
    return tuple(seen)


# --------------------------------------------------------------------------- compare


def compare(a: str | Trace | Step, b: str | Trace | Step, output: str | None = None, *,
            setup: str | None = None) -> Comparison:
    """Compare the graphs two programs build for their outputs.

    ``a`` and ``b`` are source code (run under the tracer), Traces or Steps.
    ``output`` names the tensor to compare in both; by default each program's own
    output, the tensor it assigned to a name last (``x`` in ``x = x ** 2``, ``y`` in
    ``y = x ** 2``: names play no part, those two build the same graph). ``setup``
    is code run before each program of source code. Raises ``ValueError`` (one line)
    for code that fails and for an output a program does not name.
    """
    given: tuple[str, ...] = ()
    sources = [p for p in (a, b) if isinstance(p, str)]
    if sources:
        bound_by_setup = _bound_names(setup) if setup else set()
        free = set.union(*(_free_names(src) for src in sources)) - bound_by_setup
        given = tuple(sorted(free))
    ran = [_run_program(p, which, setup, given) if isinstance(p, str) else p for p, which in ((a, "A"), (b, "B"))]
    return compare_records(ran[0], ran[1], output, given=given,
                           sources=(a if isinstance(a, str) else None, b if isinstance(b, str) else None))


def _run_program(source: str, which: str, setup: str | None, given: tuple[str, ...]) -> Trace:
    """Run ``setup``, the given leaves, then ``source`` (under the tracer), in one fresh namespace."""
    ns: dict[str, Any] = {}
    prelude = (setup.rstrip("\n") + "\n") if setup else ""
    prelude += "".join(f"{name} = {GIVEN_LEAF}\n" for name in given)
    if prelude:
        _run_setup("import torch\n" + prelude, ns, which)
    run = run_traced(source, ns, filename=f"<program {which}>", keep_last=False, import_torch=True)
    if run.exception is not None:
        err = run.trace.error
        where = f" at line {err.lineno}" if err is not None and err.lineno else ""
        message = str(run.exception).splitlines()[0] if str(run.exception) else ""
        raise ValueError(f"compare: program {which} raised {type(run.exception).__name__}{where}: {message} "
                         "(pass setup= code that defines what it needs)")
    return run.trace


def _run_setup(code: str, ns: dict[str, Any], which: str) -> None:
    """The setup code, run plainly (it is not part of the comparison), as plain ``exec`` would."""
    exec(compile(code, f"<compare setup {which}>", "exec"), ns)


def _free_names(source: str) -> set[str]:
    """Names ``source`` reads but never binds (and that are not builtins)."""
    tree = ast.parse(source)
    loaded: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return {n for n in loaded - bound if not hasattr(builtins, n) and n != "torch"}


def _bound_names(source: str) -> set[str]:
    tree = ast.parse(source)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    names |= {(al.asname or al.name).split(".")[0] for al in ast.walk(tree) if isinstance(al, ast.alias)}
    return names
