"""Quizzes: the learner predicts, PyTorch answers, the walkthrough shows why.

Place in the pipeline: tracer -> model -> **explain** -> render.

``gradtrace.quiz`` (:func:`gradtrace.live.quiz`) runs a small program and turns it into a
question; this module holds the questions and grades answers, from what that run recorded
(a :class:`~gradtrace.model.Trace` and PyTorch's answer as plain data, :class:`Truth`). Nothing
is stored as an answer string: every answer is what PyTorch (or a trace of the program) gave
when the question was made. Nothing here runs code or imports torch.

Three kinds of question:

``ask="x.grad"`` (any expression: ``"y.grad"``, ``"x._version"``, ``"y.requires_grad"``)
    The code runs with real torch under the tracer (:func:`gradtrace.live.quiz`);
    every ``backward()`` it makes is explained from the trace
    (:func:`~gradtrace.explain.walkthrough.walkthrough_of`, with the trace's node ids),
    then ``ask`` is evaluated. If the code raises, the answer is the error: the
    learner answers with its type (``TypeError``).
``ask=GRAPH_LINES`` ("which line changes the graph?")
    The lines whose statements created backward nodes, read from a trace.
``ask=REBIND_OR_MUTATE`` ("rebinding or mutation?") with ``line=``
    Whether that line moved a name to another tensor object (a rebind event) or
    changed a tensor object in place (a mutate event), both or neither.

How a typed answer is compared: the text is read as a Python literal (``5376``,
``5376.0``, ``[2, 8, 18]``, ``None``, ``True``; a pasted ``tensor([2., 8.])`` too)
and compared with torch's values element by element. Whole numbers that the dtype
holds exactly (up to 2**24 in float32, 2**53 in float64) must match exactly;
other values are accepted within a relative tolerance of :data:`RTOL` for the
dtype (``1e-05`` for float32), never finer than the dtype itself holds values
(:data:`EPS`: ``1.7`` is right for float16's ``1.7001953``, the float16 nearest
to 1.7), and the verdict says when a tolerance was used.
Shapes must match: ``[5376]`` is not the 0-d ``5376``.

Every question and verdict has ``_repr_mimebundle_`` (``text/plain`` always). In a
running Jupyter kernel with ipywidgets installed, a question shows a text box and a
*Check* button (:mod:`gradtrace.notebook.quizbox`, registered as the ``quiz_box`` view);
:meth:`Question.check` is the same check for scripts and tests.
"""

from __future__ import annotations

import ast
import html
import math
import re
import textwrap
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model import Backward, Bind, Create, Mutate, Rebind, Step, Trace, op_name, view
from ._numbers import fmt_values
from .errors import explain_error
from .walkthrough import Walkthrough, walkthrough_of

__all__ = ["EPS", "GRAPH_LINES", "REBIND_OR_MUTATE", "RTOL", "Answer", "Question", "Truth", "Verdict",
           "question_from_trace"]

GRAPH_LINES = "which line changes the graph?"
REBIND_OR_MUTATE = "rebinding or mutation?"

#: Relative tolerance per dtype for values that are not whole numbers the dtype holds exactly.
RTOL = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-5, "float64": 1e-9}

#: The gap between 1 and the next number each dtype holds (``torch.finfo(dtype).eps``): a relative
#: tolerance is never finer, so an answer the dtype would store as PyTorch's value is right.
EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}

#: Whole numbers up to this size are held exactly by the dtype (its mantissa bits + 1).
_EXACT_UP_TO = {"float16": 2.0**11, "bfloat16": 2.0**8, "float32": 2.0**24, "float64": 2.0**53}


# --------------------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class Verdict:
    """The outcome of one :meth:`Question.check`: right or wrong, and how the answer comes about.

    ``bool(verdict)`` is ``verdict.correct``.
    """

    correct: bool
    given: str
    expected: str
    message: str
    explanation: str = ""
    hint: str = ""

    def __bool__(self) -> bool:
        return self.correct

    def to_text(self) -> str:
        head = ("Right! " if self.correct else "Not quite. ") + self.message
        hint = "" if self.correct or not self.hint else "\nHint: " + self.hint
        return head + hint + ("\n\n" + self.explanation if self.explanation else "")

    __str__ = to_text

    # IPython calls this with include= and exclude= by keyword, so their names stay though unused
    def _repr_mimebundle_(self, include: Collection[str] | None = None,  # noqa: ARG002
                          exclude: Collection[str] | None = None) -> dict[str, str]:  # noqa: ARG002
        return {"text/plain": self.to_text(), "text/html": self._html()}

    def _html(self) -> str:
        colour = "#1a7f37" if self.correct else "#cf222e"
        word = "Right!" if self.correct else "Not quite."
        body = f"<pre style='white-space:pre-wrap'>{html.escape(self.explanation)}</pre>" if self.explanation else ""
        return f"<div><b style='color:{colour}'>{word}</b> {html.escape(self.message)}{body}</div>"



# --------------------------------------------------------------------------- questions


class Question:
    """A question about a program. Subclasses set ``prompt`` and implement :meth:`check`."""

    kind = "question"
    code: str

    @property
    def prompt(self) -> str:
        """The question as the learner reads it, with the code's numbered lines."""
        raise NotImplementedError

    @property
    def answer(self) -> str:
        """PyTorch's answer, as text."""
        raise NotImplementedError

    def check(self, answer: Any) -> Verdict:
        raise NotImplementedError

    def to_text(self) -> str:
        return self.prompt

    def __str__(self) -> str:
        return self.prompt

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.prompt.splitlines()[0]}>"

    # IPython calls this with include= and exclude= by keyword, so their names stay though unused
    def _repr_mimebundle_(self, include: Collection[str] | None = None,  # noqa: ARG002
                          exclude: Collection[str] | None = None) -> dict[str, Any]:  # noqa: ARG002
        bundle: dict[str, Any] = {"text/plain": self.prompt,
                                  "text/html": f"<pre>{html.escape(self.prompt)}</pre><p>{NO_KERNEL_NOTE}</p>"}
        view = self.widget()
        if view is not None:
            bundle.update({k: v for k, v in view._repr_mimebundle_().items() if k != "text/plain"})
        return bundle

    def widget(self) -> Any:
        """A text box and a Check button (ipywidgets), or ``None`` outside a Jupyter kernel."""
        return view("quiz_box")(self)


#: What a question shows in a notebook under its prompt.
NO_KERNEL_NOTE = ("Type your answer in the box below and press Enter. If the box does not answer "
                  "(a reopened notebook), run this cell again: checking needs the notebook's kernel.")


def _listing(code: str) -> str:
    lines = code.splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"  {i:>{width}} | {text}" for i, text in enumerate(lines, start=1))


def clean_code(code: str) -> str:
    """The quiz's code as it is shown and run: dedented, one trailing newline."""
    return textwrap.dedent(code).strip("\n") + "\n"


# --------------------------------------------------------------------------- value questions


@dataclass(frozen=True)
class Truth:
    """PyTorch's answer as plain data. ``kind``: tensor, number, bool, none, text or error."""

    kind: str
    values: Any
    text: str
    dtype: str = ""
    shape: tuple[int, ...] = ()


@dataclass(frozen=True)
class Answer:
    """What running the program gave: the answer, the walkthroughs, warnings, the error."""

    truth: Truth
    walks: tuple[tuple[int, Walkthrough], ...] = ()
    warnings: tuple[str, ...] = ()
    error: str = ""
    error_line: int | None = None


@dataclass(frozen=True, repr=False)
class ValueQuestion(Question):
    """What is ``ask`` after the code runs? Answered by running the code with torch."""

    code: str
    ask: str
    run: Answer
    rtol: float | None = None
    kind: str = field(default="value", init=False)

    @property
    def prompt(self) -> str:
        return (f"What is {self.ask} after this code runs?\n\n{_listing(self.code)}\n\n"
                "Answer with a number, a list such as [1, 2], None, True/False, or the type of the error "
                "if you think the code fails.\nWhole numbers are checked exactly, others within the dtype's "
                "relative tolerance.")

    @property
    def answer(self) -> str:
        """PyTorch's answer, as text (shown only after a check in a lesson)."""
        return self.run.truth.text

    def check(self, answer: Any) -> Verdict:
        given = str(answer).strip()
        truth = self.run.truth
        if truth.kind == "error":
            ok, message = _check_error(given, truth)
        else:
            ok, message = _check_value(given, truth, self.ask, self.rtol)
        hint = "" if ok else _value_hint(given, truth, self.ask)
        return Verdict(ok, given, truth.text, message, self._explanation(), hint)

    def _explanation(self) -> str:
        parts = [self._computed()]
        parts += [_walk_text(line, walk, len(self.run.walks)) for line, walk in self._relevant_walks()]
        if self.run.error:
            parts.append(self.run.error)
        parts += [f"PyTorch warned: {w}" for w in self.run.warnings]
        return "\n\n".join(p for p in parts if p)

    def _computed(self) -> str:
        truth = self.run.truth
        if truth.kind == "error":
            return f"The code raises {truth.text} at line {self.run.error_line}."
        detail = f" ({truth.dtype}, shape {tuple(truth.shape)})" if truth.kind == "tensor" else ""
        return f"PyTorch computed {self.ask} = {truth.text}{detail}."

    def _relevant_walks(self) -> list[tuple[int, Walkthrough]]:
        match = re.fullmatch(r"\s*([\w.]+?)\.grad\s*", self.ask)
        if match is None:
            return []
        name = match.group(1)
        mentioned = [(line, w) for line, w in self.run.walks
                     if any(leaf.label == name for leaf in w.leaves)
                     or any(label == name for step in w.steps for label, _ in step.retained)]
        return mentioned or list(self.run.walks)


def _value_hint(given: str, truth: Truth, ask: str) -> str:
    """A nudge that does not give the answer away."""
    looks_like_error = bool(re.search(r"error|exception|fails?|raises?", given.lower()))
    if truth.kind == "error":
        return ("the code does fail: which error does PyTorch raise?" if looks_like_error
                else "read every line again: one of them raises an error, and nothing after it runs.")
    if looks_like_error:
        return "every line of this code runs without an error."
    try:
        value = parse_answer(given)
    except ValueError:
        return "answer with a number, a list such as [1, 2], None, True or False."
    shape = _shape(value) if truth.kind == "tensor" else None
    if truth.kind == "tensor" and shape is not None and shape != tuple(truth.shape):
        return f"{ask} has {_shape_words(truth.shape)}, shape {tuple(truth.shape)}."
    bits = []
    if truth.kind == "tensor" and shape == () and isinstance(value, (int, float)) and not isinstance(value, bool):
        target = float(next(iter(_flat(truth.values))))
        if not math.isnan(target):
            bits.append("your answer is too " + ("high." if value > target else "low."))
    match = re.fullmatch(r"\s*([\w.]+?)\.grad\s*", ask)
    if match:
        name = match.group(1)
        bits.append(f"{name}.grad adds up, over every path from the output back to {name}, "
                    "the product of the local derivatives along it.")
    return " ".join(bits) or "follow the code line by line and keep track of each tensor's value."


def _walk_text(line: int, walk: Walkthrough, count: int) -> str:
    head = f"How the number comes about (backward() at line {line}):" if count == 1 else \
        f"backward() at line {line}:"
    return head + "\n" + walk.to_text()


def _check_error(given: str, truth: Truth) -> tuple[bool, str]:
    words = given.lower()
    if truth.text.lower() in words:
        return True, f"The code fails with {truth.text}."
    if re.search(r"\b(error|exception|fails?|raises?)\b", words) and not re.search(r"[a-z]error\b", words):
        return True, f"The code fails, with {truth.text}."
    if re.search(r"\w+error\b", words):
        return False, f"The code does fail, but with {truth.text}, not {given}."
    return False, f"The code does not get that far: it raises {truth.text}."


def _check_value(given: str, truth: Truth, ask: str, rtol: float | None) -> tuple[bool, str]:
    if re.fullmatch(r"\w*(Error|Exception)\b.*", given):
        return False, f"The code runs without an error; {ask} is {truth.text}."
    try:
        value = parse_answer(given)
    except ValueError as exc:
        return False, f"{exc} PyTorch's answer is {truth.text}."
    if truth.kind == "text":
        ok = str(value).strip().strip("'\"") == truth.values
        return ok, f"{ask} is {truth.text}."
    if truth.kind in ("none", "bool"):
        ok = value is truth.values or (truth.kind == "bool" and value == truth.values and isinstance(value, bool))
        return ok, f"{ask} is {truth.text}."
    if value is None or isinstance(value, bool) and truth.kind != "bool":
        return False, f"{ask} is {truth.text}, not {given}."
    return _compare_numbers(value, truth, ask, rtol)


def _compare_numbers(value: Any, truth: Truth, ask: str, rtol: float | None) -> tuple[bool, str]:
    shape = _shape(value)
    if shape is None:
        return False, f"Could not read {value!r} as a number or a rectangular list. {ask} is {truth.text}."
    if shape != tuple(truth.shape):
        return False, (f"{ask} has shape {tuple(truth.shape)} ({_shape_words(truth.shape)}); your answer has "
                       f"shape {shape}. {ask} is {truth.text}.")
    tol = max(rtol if rtol is not None else RTOL.get(truth.dtype, 1e-5), EPS.get(truth.dtype, 0.0))
    used_tol = False
    for g, t in zip(_flat(value), _flat(truth.values), strict=True):
        if _exact(t, truth.dtype):
            if g != t:
                return False, f"{ask} is {truth.text}."
        else:
            used_tol = True
            if not _close(float(g), float(t), tol):
                return False, f"{ask} is {truth.text} (compared within a relative tolerance of {tol:g})."
    note = f" (compared within a relative tolerance of {tol:g} for {truth.dtype})" if used_tol else ""
    return True, f"{ask} is {truth.text}{note}."


def _close(g: float, t: float, tol: float) -> bool:
    if math.isnan(t):
        return math.isnan(g)
    if math.isinf(t):
        return g == t
    return abs(g - t) <= tol * abs(t)


def _exact(t: Any, dtype: str) -> bool:
    if isinstance(t, (bool, int)):
        return True
    limit = _EXACT_UP_TO.get(dtype, 2.0**24)
    return isinstance(t, float) and t.is_integer() and abs(t) <= limit


def _shape(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, list):
        inner = {_shape(v) for v in value}
        if len(inner) > 1:
            return None
        rest = inner.pop() if inner else ()
        return None if rest is None else (len(value), *rest)
    return () if isinstance(value, (int, float)) else None


def _shape_words(shape: tuple[int, ...]) -> str:
    if not shape:
        return "a single number, a 0-d tensor"
    return f"{len(shape)}-d"


def _flat(value: Any) -> Iterable[Any]:
    if isinstance(value, list):
        for v in value:
            yield from _flat(v)
    else:
        yield value


_TENSOR_TEXT = re.compile(r"(?:torch\.)?tensor\((?P<inner>.*)\)", re.S)
_KWARGS = re.compile(r",\s*(?:dtype|requires_grad|grad_fn|device)=.*$", re.S)


def parse_answer(text: str) -> Any:
    """A learner's typed answer as plain Python: a number, nested lists, ``None``, a bool or a word.

    ``"5376"``, ``"5376.0"``, ``"[2, 8, 18]"``, ``"tensor([2., 8., 18.], dtype=torch.float64)"``.
    Raises ``ValueError`` with a readable message for text that is none of these.
    """
    s = text.strip()
    match = _TENSOR_TEXT.fullmatch(s)
    if match:
        s = _KWARGS.sub("", match.group("inner")).strip()
    lowered = s.lower()
    if lowered in ("none", "true", "false"):
        return {"none": None, "true": True, "false": False}[lowered]
    if re.fullmatch(r"[A-Za-z_]\w*", s):
        return s
    try:
        value = ast.literal_eval(s)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise ValueError(f"Could not read {text!r} as a number or a list of numbers.") from None
    return _listify(value, text)


def _listify(value: Any, text: str) -> Any:
    if isinstance(value, (list, tuple)):
        return [_listify(v, text) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ValueError(f"Could not read {text!r} as a number or a list of numbers.")


def tensor_truth(values: Any, dtype: str, shape: tuple[int, ...]) -> Truth:
    """A tensor's answer, from its values (nested lists), dtype name (``float32``) and shape."""
    return Truth("tensor", values, fmt_values(values, dtype), dtype, shape)


def plain_truth(value: Any) -> Truth:
    """The answer for a value that is not a tensor: None, a bool, a number, a list of ints, else its text."""
    if value is None:
        return Truth("none", None, "None")
    if isinstance(value, bool):
        return Truth("bool", value, str(value))
    if isinstance(value, (int, float)):
        dtype = "int" if isinstance(value, int) else "float64"
        return Truth("number", value, fmt_values(value, dtype), dtype)
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return Truth("number", list(value), fmt_values(list(value), "int"), "int", (len(value),))
    return Truth("text", str(value), str(value))


# --------------------------------------------------------------------------- running the code


def error_text(exc: BaseException, line: int | None, code: str, trace: Trace) -> str:
    """What the code raised, where, and why (:func:`~gradtrace.explain.errors.explain_error`)."""
    lines = code.splitlines()
    where = f"line {line}: {lines[line - 1].strip()}" if line and 0 < line <= len(lines) else f"line {line}"
    text = f"{type(exc).__name__} at {where}\n{exc}".rstrip()
    return text + "\n\n" + explain_error(exc, trace).to_text()


def walks(trace: Trace) -> tuple[tuple[int, Walkthrough], ...]:
    """The walkthrough of every recorded ``backward()``, with the trace's ids, and its line."""
    out = []
    for step in trace.steps:
        for event in step.events:
            if isinstance(event, Backward) and event.flow:
                out.append((step.lineno, walkthrough_of(step, event)))
    return tuple(out)


def error_answer(exc: BaseException, code: str, trace: Trace, warned: tuple[str, ...]) -> Answer:
    """The answer when the code raised ``exc``: the error is the answer (the learner names its type)."""
    line = trace.error.lineno if trace.error is not None else None
    truth = Truth("error", type(exc).__name__, type(exc).__name__)
    return Answer(truth, walks(trace), warned, error_text(exc, line, code, trace), line)


# --------------------------------------------------------------------------- questions from a trace


def _node_name(step: Step, node_id: str) -> str:
    info = step.nodes.get(node_id)
    return node_id if info is None else f"{node_id} {op_name(info.name)}"


def _created_nodes(trace: Trace) -> dict[int, list[str]]:
    """Line number -> the backward nodes its statement created (in order, every time it ran)."""
    made: dict[int, list[str]] = {}
    for step in trace.steps:
        for event in step.events:
            if isinstance(event, Create) and event.nodes:
                made.setdefault(step.lineno, []).extend(_node_name(step, n) for n in event.nodes)
    return made


@dataclass(frozen=True, repr=False)
class GraphLinesQuestion(Question):
    """Which lines change the autograd graph (create backward nodes)? Answered from a trace."""

    code: str
    lines: tuple[int, ...]
    created: Mapping[int, tuple[str, ...]]
    error: str = ""
    kind: str = field(default="graph_lines", init=False)

    @property
    def prompt(self) -> str:
        return (f"Which lines change the autograd graph (add backward nodes to it)?\n\n{_listing(self.code)}\n\n"
                "Answer with line numbers, for example: 2, 4")

    @property
    def answer(self) -> str:
        return ", ".join(str(n) for n in self.lines) or "none"

    def check(self, answer: Any) -> Verdict:
        given = str(answer).strip()
        picked = {int(n) for n in re.findall(r"\d+", given)}
        right = set(self.lines)
        ok = picked == right
        if ok:
            message = (f"Line {self.answer} adds nodes" if len(right) == 1 else f"Lines {self.answer} add nodes"
                       if right else "No line adds a node") + " to the graph; the others do not."
        else:
            missing, extra = sorted(right - picked), sorted(picked - right)
            bits = []
            if missing:
                bits.append(f"you left out {', '.join(map(str, missing))}")
            if extra:
                bits.append(("lines " if len(extra) > 1 else "line ") + ", ".join(map(str, extra))
                            + (" add" if len(extra) > 1 else " adds") + " no node")
            message = f"The lines that add nodes are {self.answer}: " + "; ".join(bits) + "."
        count = len(right)
        hint = "" if ok else ("a line adds backward nodes when it computes with a tensor that requires grad; "
                              + (f"{count} line{'s' if count != 1 else ''} of this code do{'es' if count == 1 else ''}."
                                 if count else "no line of this code does."))
        return Verdict(ok, given, self.answer, message, self._explanation(), hint)

    def _explanation(self) -> str:
        out = ["Line by line, what each statement added to the graph:"]
        lines = self.code.splitlines()
        width = max((len(text.rstrip()) for text in lines), default=0)
        for i, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            made = self.created.get(i)
            what = ("new node " if len(made) == 1 else "new nodes ") + ", ".join(made) if made else "no new node"
            out.append(f"  {i:>3} | {text.rstrip():<{width}}   {what}")
        if self.error:
            out.append(self.error)
        return "\n".join(out)


_ANSWERS = ("rebinding", "mutation", "both", "neither")


@dataclass(frozen=True, repr=False)
class RebindQuestion(Question):
    """Does a line rebind a name, mutate a tensor in place, both or neither? Answered from a trace."""

    code: str
    line: int
    truth: str
    details: tuple[str, ...]
    kind: str = field(default="rebind_or_mutate", init=False)

    @property
    def prompt(self) -> str:
        text = self.code.splitlines()[self.line - 1].strip()
        return (f"Line {self.line} ({text}): rebinding or mutation?\n\n{_listing(self.code)}\n\n"
                "Answer rebinding (a name moves to another tensor object), mutation (a tensor object changes "
                "in place), both, or neither.")

    @property
    def answer(self) -> str:
        return self.truth

    def check(self, answer: Any) -> Verdict:
        given = str(answer).strip()
        picked = _read_rebind_answer(given)
        if picked is None:
            return Verdict(False, given, self.truth,
                           f"Answer one of {', '.join(_ANSWERS)}. Line {self.line} is: {self.truth}.",
                           "\n".join(self.details))
        hint = "" if picked == self.truth else (
            f"does line {self.line} point a name at a new tensor object (rebinding), change an existing tensor's "
            "values in place (mutation: a method ending in _, an indexed assignment, +=), both, or neither?")
        return Verdict(picked == self.truth, given, self.truth, f"Line {self.line} is: {self.truth}.",
                       "\n".join(self.details), hint)


def _read_rebind_answer(text: str) -> str | None:
    words = text.lower()
    rebind = bool(re.search(r"rebind|rebound|re-bind|reassign|new object", words))
    mutate = bool(re.search(r"mutat|in[- ]?place|modif", words))
    if "neither" in words or words in ("none", "no"):
        return "neither"
    if "both" in words or (rebind and mutate):
        return "both"
    return "rebinding" if rebind else "mutation" if mutate else None


def _rebind_details(trace: Trace, line: int) -> tuple[str, tuple[str, ...]]:
    rebinds, mutates, lines = False, False, []
    for step in trace.steps:
        if step.lineno != line:
            continue
        for e in step.events:
            if isinstance(e, Rebind):
                rebinds = True
                lines.append(_rebind_words(e, step))
            elif isinstance(e, Mutate):
                mutates = True
                lines.append(_mutate_words(e, step))
            elif isinstance(e, Bind):
                lines.append(f"{e.name} now names {e.new}: a name that named no tensor before (nothing moved, "
                             "nothing changed in place).")
    truth = "both" if rebinds and mutates else "rebinding" if rebinds else "mutation" if mutates else "neither"
    if not lines:
        lines.append("No name moved to another tensor object and no tensor object changed in place on this line.")
    return truth, tuple(lines)


def _rebind_words(e: Rebind, step: Step) -> str:
    held = [*e.held_by_names, *(_node_name(step, n) for n in e.held_by_nodes)]
    still = (f"; it is still held by {', '.join(held)}" if held else
             "; no name or node holds it, though something not shown (a tuple, list or iterator) keeps it alive"
             if e.held_elsewhere else "; nothing holds it any more")
    return (f"Rebinding: the name {e.name} moved from tensor {e.old} to a different tensor object {e.new}. "
            f"{e.old} itself is unchanged{still}.")


def _mutate_words(e: Mutate, step: Step) -> str:
    names = step.names_of(e.tensor)
    who = f"{e.tensor} ({', '.join(names)})" if names else e.tensor
    view = e.via is not None and shares_view(step, e.tensor, e.via)
    by = f" by {e.op}" if e.op and (e.via is None or view) else ""
    if e.op in ("requires_grad_", "detach_") and e.version_before == e.version_after and e.via is None:
        flag = "its grad_fn dropped" if e.op == "detach_" else "its requires_grad flag set"
        return (f"Mutation: tensor object {who} had {flag} in place by {e.op}; its values and version "
                f"{e.version_after} are unchanged.")
    if e.values_kept:
        text = (f"Mutation: tensor object {who} keeps its values, but its version moved with {e.via}'s "
                f"(they share a version counter): version {e.version_before} → {e.version_after}")
    else:
        text = f"Mutation: tensor object {who} changed in place{by}: version {e.version_before} → {e.version_after}"
    if e.grad_fn_before != e.grad_fn_after:
        before = _node_name(step, e.grad_fn_before) if e.grad_fn_before else "None"
        after = _node_name(step, e.grad_fn_after) if e.grad_fn_after else "None"
        text += f", grad_fn {before} → {after}"
    if e.values_kept:
        pass
    elif view:
        text += f" (changed through the view {e.via})"
    elif e.via is not None:
        text += f" (written in the same statement as the in-place change of {e.via})"
    if e.stale:
        text += "; now stale: " + ", ".join(f"{saved} saved by {_node_name(step, node)}" for node, saved in e.stale)
    return text + "."


def shares_view(step: Step, a: str, b: str) -> bool:
    """Whether tensors ``a`` and ``b`` are a view and its base, or two views of one base, at ``step``."""
    ta, tb = step.tensors.get(a), step.tensors.get(b)
    if ta is None or tb is None or a == b:
        return False
    return (ta.base or a) == (tb.base or b)


def _resolve_line(code: str, line: int | str | None) -> int:
    lines = code.splitlines()
    if line is None:
        raise ValueError(f"quiz(ask={REBIND_OR_MUTATE!r}) needs line= (a line number or the line's code)")
    if isinstance(line, int):
        if not 1 <= line <= len(lines):
            raise ValueError(f"line={line} is outside the code (lines 1 to {len(lines)})")
        return line
    wanted = line.strip()
    for exact in (True, False):
        for i, text in enumerate(lines, start=1):
            if (text.strip() == wanted) if exact else (wanted in text):
                return i
    raise ValueError(f"no line of the code reads {line!r}")


# --------------------------------------------------------------------------- the entry point


def kind_of(ask: str) -> str:
    """``"value"``, ``"graph_lines"`` (:data:`GRAPH_LINES`) or ``"rebind_or_mutate"`` (:data:`REBIND_OR_MUTATE`)."""
    key = re.sub(r"[^a-z]", "", ask.lower())
    if key in ("whichlinechangesthegraph", "whichlineschangethegraph", "graphlines"):
        return "graph_lines"
    if key in ("rebindingormutation", "rebindormutate", "rebindingormutating"):
        return "rebind_or_mutate"
    return "value"


def question_from_trace(code: str, kind: str, trace: Trace, line: int | str | None = None) -> Question:
    """A :data:`GRAPH_LINES` or :data:`REBIND_OR_MUTATE` question about ``code``, answered by its ``trace``."""
    if kind == "graph_lines":
        created = {k: tuple(v) for k, v in _created_nodes(trace).items()}
        error = f"The code stopped with {trace.error.type}: {trace.error.message}" if trace.error else ""
        return GraphLinesQuestion(code, tuple(sorted(created)), created, error)
    number = _resolve_line(code, line)
    truth, details = _rebind_details(trace, number)
    return RebindQuestion(code, number, truth, details)
