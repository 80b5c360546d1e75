// gradtrace notebook widget: the stepper (render/static/stepper.js) inside an anywidget.
//
// Python inlines stepper.js in place of the import below (anywidget loads one module
// from a string, where a relative import cannot resolve). Everything the stepper shows
// is in the model's "film", so stepping never waits for the kernel; "step" is sent back
// only so Python can read where the learner is, and a closed comm (no kernel: a saved
// notebook) is fine. JupyterLab reads keys for notebook navigation: the wrapper is
// focusable, marks itself with data-lm-suppress-shortcuts and keeps arrow keys to itself.
import { mount } from "../../render/static/stepper.js";

const OWN_KEYS = new Set(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", " "]);

function keepKeys(wrap) {
  const onKey = (ev) => {
    if (OWN_KEYS.has(ev.key) && !ev.altKey && !ev.ctrlKey && !ev.metaKey) ev.stopPropagation();
  };
  wrap.addEventListener("keydown", onKey);
  // A click anywhere in the stepper (not on a control) gives it the keyboard.
  const onDown = (ev) => {
    const tag = ev.target && ev.target.tagName;
    if (tag !== "INPUT" && tag !== "BUTTON") {
      const root = wrap.querySelector(".gt-root");
      if (root) setTimeout(() => root.focus({ preventScroll: true }), 0);
    }
  };
  wrap.addEventListener("mousedown", onDown);
  return () => {
    wrap.removeEventListener("keydown", onKey);
    wrap.removeEventListener("mousedown", onDown);
  };
}

function sendStep(model, i) {
  if (model.get("step") === i) return;
  try {
    model.set("step", i);
    model.save_changes();
  } catch (err) {
    // no kernel behind this view (saved notebook): stepping goes on without telling anyone
  }
}

function render({ model, el }) {
  const wrap = document.createElement("div");
  wrap.className = "gt-widget";
  wrap.setAttribute("data-lm-suppress-shortcuts", "true");
  el.appendChild(wrap);
  const options = {
    step: model.get("step") || 0,
    interval: model.get("interval") || 900,
    onStep: (i) => sendStep(model, i),
  };
  let stepper = mount(wrap, model.get("film") || {}, options);
  const release = keepKeys(wrap);

  const onFilm = () => {
    stepper.destroy();
    options.step = 0;
    stepper = mount(wrap, model.get("film") || {}, options);
  };
  const onStepFromPython = () => {
    const i = model.get("step") || 0;
    if (stepper.step !== i) stepper.show(i);
  };
  const onInterval = () => {
    options.interval = model.get("interval") || 900;
  };
  model.on("change:film", onFilm);
  model.on("change:step", onStepFromPython);
  model.on("change:interval", onInterval);
  return () => {
    model.off("change:film", onFilm);
    model.off("change:step", onStepFromPython);
    model.off("change:interval", onInterval);
    release();
    stepper.destroy();
  };
}

export default { render };
