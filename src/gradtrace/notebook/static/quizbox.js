// The answer box of a gradtrace quiz, as an anywidget ES module (see gradtrace/notebook/quizbox.py).
//
// The kernel checks every answer (PyTorch's value, the tolerance, the hint): this module only sends what
// the learner typed ({kind: "check", answer}) and shows the verdict the kernel writes into `result`.
// It also tells whether a kernel is there: it says {kind: "hello"} when it is drawn, and the kernel
// answers {kind: "alive"}. Then the note beside the box ("run cell [1], then this cell ...", written
// for a saved notebook with no kernel behind it) is hidden; if no kernel answers, the note stays and a
// Check says that nothing answered. When the kernel goes away (a restart closes the widget), the note
// shows again.

const WAIT_MS = 4000;

function h(tag, cls, text) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined) el.textContent = text;
  return el;
}

function render({ model, el }) {
  const uid = String(model.get("uid") || "");
  const notes = () =>
    uid ? Array.from(document.querySelectorAll(`[data-gt-quiz="${CSS.escape(uid)}"]`)) : [];
  const box = h("div", "gt-quiz");
  const input = h("input", "gt-quiz-input");
  input.type = "text";
  input.placeholder = "your answer, then Enter";
  input.setAttribute("aria-label", "your answer");
  const check = h("button", "gt-quiz-check", "Check");
  const reveal = h("button", "gt-quiz-reveal", "Show answer");
  const result = h("div", "gt-quiz-result");
  result.setAttribute("aria-live", "polite");
  const silent = h("div", "gt-quiz-silent");
  silent.hidden = true;
  const row = h("div", "gt-quiz-row");
  row.append(input, check, reveal);
  box.append(row, silent, result);
  el.appendChild(box);

  let waiting = null;
  function wait() {
    clearTimeout(waiting);
    waiting = setTimeout(() => {
      silent.textContent = "No kernel answered: run the cells the note above names (or Run All), then try again.";
      silent.hidden = false;
      result.hidden = true; // a verdict saved with the notebook is not an answer to what is typed now
      for (const n of notes()) n.hidden = false;
    }, WAIT_MS);
  }
  function heard() {
    clearTimeout(waiting);
    waiting = null;
    silent.hidden = true;
    result.hidden = false;
    for (const n of notes()) n.hidden = true;
  }
  function send(content) {
    try {
      model.send(content);
    } catch (err) {
      // a widget drawn from saved state has no kernel to send to: the timer says so
    }
    wait();
  }
  function draw() {
    result.innerHTML = String(model.get("result") || ""); // the kernel's verdict, its text already escaped
    reveal.hidden = !model.get("revealable");
  }
  const submit = () => send({ kind: "check", answer: input.value });
  const onKey = (ev) => {
    if (ev.key === "Enter") {
      ev.preventDefault();
      submit();
    }
    ev.stopPropagation(); // typing here is not a notebook shortcut
  };
  const onMsg = (msg) => {
    if (msg && (msg.kind === "alive" || msg.kind === "checked")) heard();
  };
  input.addEventListener("keydown", onKey);
  check.addEventListener("click", submit);
  reveal.addEventListener("click", () => send({ kind: "reveal" }));
  model.on("change:result", draw);
  model.on("change:revealable", draw);
  model.on("msg:custom", onMsg);
  draw();
  send({ kind: "hello" });
  return () => {
    clearTimeout(waiting);
    model.off("change:result", draw);
    model.off("change:revealable", draw);
    model.off("msg:custom", onMsg);
    for (const n of notes()) n.hidden = false; // the kernel went away: say again what to run
  };
}

export default { render };
