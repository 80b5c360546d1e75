"""A quiz in JupyterLab: its question, a note for the saved notebook, and an answer box the kernel checks.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

``%load_ext gradtrace`` registers :func:`show_question` as the way a
:class:`~gradtrace.explain.quiz.Question` displays itself in the kernel. It shows two outputs:

1. the question (``text/html`` and ``text/plain``) and a note, written for the notebook as it is
   saved: checking needs the kernel, so when nothing answers (a reopened notebook, a restarted
   kernel) the note names the cells to run, by the numbers their prompts show: the cell that
   imported gradtrace and this one (or Run All);
2. the answer box (:class:`QuizBox`, an anywidget): Enter or *Check* sends the answer to the
   kernel, which grades it (:class:`Attempts`: a hint after a wrong answer, another try,
   *Show answer*) and writes the verdict back.

The box hides the note while a kernel answers it (it says hello when drawn, the kernel answers),
and shows it again when the kernel goes away. So:

- live (after running the cell, after Run All, or a reopened notebook whose kernel still runs,
  whose widgets JupyterLab draws again from the kernel): the box answers, no note;
- a saved notebook with no kernel behind it: the question and the note (and, if JupyterLab saved
  widget state, a box that says "No kernel answered" when used);
- an nbconvert export or a viewer with no kernel: the question and the note.

Without ``%load_ext gradtrace`` a question shows as before (one output; the ipywidgets box of
:func:`answer_widget`, which a question finds as its ``quiz_box`` view, registered by the package
root: see :func:`gradtrace.model.register_view`). Both boxes grade through :class:`Attempts`.
"""

from __future__ import annotations

import functools
import html
import re
import secrets
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..explain.quiz import Question

__all__ = ["Attempts", "QuizBox", "answer_box", "answer_widget", "dead_note", "register", "show_question"]

#: a cell that makes gradtrace available: ``import gradtrace``, ``from gradtrace ...``, ``%load_ext gradtrace``
_SETUP = re.compile(r"^\s*(import gradtrace\b|from gradtrace\b|get_ipython\(\)\.run_line_magic\('load_ext', "
                    r"'gradtrace'\))", re.M)


@functools.cache
def _static(name: str) -> str:
    return (resources.files("gradtrace.notebook") / "static" / name).read_text(encoding="utf-8")


def _cells(shell: Any) -> tuple[int | None, int | None]:
    """(the cell running now, the latest earlier cell that imported gradtrace), as their prompts number them."""
    if shell is None:
        return None, None
    from ._ipython import cell_number

    now = cell_number(shell)
    inputs = list(shell.user_ns.get("In", []) or []) if hasattr(shell, "user_ns") else []
    setup = None
    for number in range(min(len(inputs), now or len(inputs)) - 1, 0, -1):
        if _SETUP.search(str(inputs[number])):
            setup = number
            break
    return (now if isinstance(now, int) else None), setup


def dead_note(now: int | None, setup: int | None) -> str:
    """What a learner reads beside a quiz with no kernel behind it: which cells to run."""
    this = f"this cell, [{now}]" if now else "this cell"
    if setup and setup != now:
        steps = f"run cell [{setup}] (it imports gradtrace), then {this}"
    else:
        steps = f"run {this}"
    return (f"Checking an answer needs the notebook's kernel. If the box does not answer (a reopened notebook, "
            f"a restarted kernel): {steps}; or Run → Run All Cells.")


class _Box:
    """The answer box's behaviour, apart from the widget: what the kernel does with each message."""

    def __init__(self, question: Any) -> None:
        self.attempts = Attempts(question)

    def answer(self, content: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """(traits to set, message to send back) for one message from the front end."""
        kind = content.get("kind") if isinstance(content, dict) else None
        if kind == "check":
            result = self.attempts.submit(str(content.get("answer", "")))
            shown = {"result": result, "revealable": bool(self.attempts.tries and not self.attempts.solved)}
            return shown, {"kind": "checked"}
        if kind == "reveal":
            return {"result": self.attempts.reveal(), "revealable": False}, {"kind": "checked"}
        return {}, {"kind": "alive"}


# --------------------------------------------------------------------------- the ipywidgets box


class Attempts:
    """What a quiz box shows for each answer: a wrong one gets a hint and another try.

    The answer is shown only when the learner gets it right or asks for it
    (:meth:`reveal`). Submitting the same text twice in a row (Enter, then a
    click on Check) counts once.
    """

    def __init__(self, question: Question) -> None:
        self.question = question
        self.tries = 0
        self.solved = False
        self._last: tuple[str, str] | None = None

    def submit(self, text: str) -> str:
        """The HTML to show for ``text``."""
        given = str(text).strip()
        if not given:
            return "<div>Type an answer, then press Enter or Check.</div>"
        if self._last is not None and self._last[0] == given:
            return self._last[1]
        verdict = self.question.check(given)
        self.tries += 1
        if verdict.correct:
            self.solved = True
            shown = verdict._html()
        else:
            tries = f"try {self.tries}" if self.tries > 1 else "first try"
            hint = f"<div><b>Hint:</b> {html.escape(verdict.hint)}</div>" if verdict.hint else ""
            shown = (f"<div><b style='color:#cf222e'>Not quite</b> ({tries}). {hint}"
                     "<div>Change your answer and press Enter again, or press <i>Show answer</i>.</div></div>")
        self._last = (given, shown)
        return shown

    def reveal(self) -> str:
        """The answer with its explanation, as HTML."""
        verdict = self.question.check(self.question.answer)
        body = (f"<pre style='white-space:pre-wrap'>{html.escape(verdict.explanation)}</pre>"
                if verdict.explanation else "")
        return f"<div><b>Answer:</b> {html.escape(verdict.message)}{body}</div>"


def answer_widget(question: Question) -> Any:
    """ipywidgets: the prompt, a Text box (Enter submits), Check and Show answer buttons, the verdict."""
    from .display import in_kernel

    if not in_kernel():
        return None
    try:
        import ipywidgets as w
    except ImportError:
        return None
    return answer_box(question, w)


def answer_box(question: Question, w: Any) -> Any:
    """The quiz's widgets, built with the ipywidgets module ``w`` (see :func:`_answer_box`)."""
    attempts = Attempts(question)
    prompt = w.HTML(f"<pre>{html.escape(question.prompt)}</pre>")
    box = w.Text(placeholder="your answer, then Enter", description="Answer:", continuous_update=False)
    check = w.Button(description="Check", button_style="primary")
    show = w.Button(description="Show answer", layout=w.Layout(display="none"))
    result = w.HTML()

    def submit(_: Any = None) -> None:
        result.value = attempts.submit(box.value)
        show.layout.display = "none" if attempts.solved or not attempts.tries else None

    def reveal(_: Any) -> None:
        result.value = attempts.reveal()
        show.layout.display = "none"

    box.observe(submit, names="value")
    check.on_click(submit)
    show.on_click(reveal)
    return w.VBox([prompt, w.HBox([box, check, show]), result])


# --------------------------------------------------------------------------- the anywidget box


@functools.cache
def _widget_class() -> type:
    import anywidget
    import traitlets as t

    class QuizBox(anywidget.AnyWidget):
        """The answer box: Enter or Check sends the answer; the kernel writes the verdict into ``result``."""

        _esm = _static("quizbox.js")
        _css = _static("quizbox.css")
        uid = t.Unicode("").tag(sync=True)
        result = t.Unicode("").tag(sync=True)
        revealable = t.Bool(False).tag(sync=True)

        def __init__(self, question: Any, uid: str = "") -> None:
            super().__init__(uid=uid)
            self._box = _Box(question)
            self.on_msg(self._message)

        def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
            traits, reply = self._box.answer(content)
            for name, value in traits.items():
                setattr(self, name, value)
            self.send(reply)

        def __repr__(self) -> str:
            return "(the quiz's answer box: it needs the notebook's kernel)"

    return QuizBox


def QuizBox(question: Any, uid: str = "") -> Any:  # noqa: N802 - a class, made on first use
    """The answer box widget for ``question`` (needs anywidget); ``uid`` names the note it hides while answered."""
    return _widget_class()(question, uid=uid)


#: JupyterLab draws a widget output whose model is gone (a reopened notebook whose kernel did not make it)
#: as the bare words "Error displaying widget: model not found", or "Loading widget..." while no kernel
#: comes: its widget output (a panel) then holds text only, where a drawn box has elements. The note
#: beside the box already says what to run, so the output right after the note is hidden while it is a
#: widget output with no box in it.
_NO_BOX_STYLE = ("<style>.jp-OutputArea-child:has(.gt-quiz-note) + .jp-OutputArea-child > "
                 ".jp-OutputArea-output.lm-Panel:not(:has(*)){display:none}</style>")


def _question_bundle(question: Any, uid: str, note: str) -> dict[str, str]:
    prompt = html.escape(question.prompt)
    return {
        "text/plain": f"{question.prompt}\n\n{note}",
        "text/html": (f"<pre>{prompt}</pre><p class='gt-quiz-note' data-gt-quiz='{uid}' "
                      f"style='margin:4px 0;padding:4px 8px;border-left:3px solid #9a3412'>{html.escape(note)}</p>"
                      f"{_NO_BOX_STYLE}"),
    }


def show_question(question: Any) -> None:
    """Display ``question`` in the running kernel: the question and its note, then the answer box."""
    from ._ipython import display, get_ipython

    now, setup = _cells(get_ipython())
    note = dead_note(now, setup)
    uid = "gt-quiz-" + secrets.token_hex(6)
    display(_question_bundle(question, uid, note), raw=True)
    try:
        box = QuizBox(question, uid=uid)
    except ImportError:  # no anywidget: the plain ipywidgets box (no note hiding, but it answers)
        view = answer_widget(question)
        if view is not None:
            display(view)
        return
    display(box)


def register(shell: Any) -> None:
    """Make questions display through :func:`show_question` in ``shell`` (``%load_ext gradtrace``)."""
    formatter = shell.display_formatter.ipython_display_formatter
    formatter.for_type_by_name("gradtrace.explain.quiz", "Question", show_question)
