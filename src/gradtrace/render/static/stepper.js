// gradtrace stepper: shows a film (gradtrace/render/film.py) one step at a time.
//
// A dependency-free ES module. `mount(el, film, options)` draws the stepper into
// `el` and returns a controller {show(i), next(), prev(), play(), pause(), destroy(), get step()}.
// It keeps no global state: every piece of state lives in the closure of one mount,
// so several steppers can live on one page (or in several notebook outputs).
//
// Safety: learner text (names, code, values, op names) only ever reaches the page
// through textContent or SVG text nodes, never as markup. The film's SVG is our own
// Graphviz output; it is parsed as XML and cleaned of anything but drawing before use.

const SVG_NS = "http://www.w3.org/2000/svg";
const DRAWING = new Set(["svg", "g", "title", "polygon", "path", "text", "ellipse", "polyline", "tspan"]);

function h(tag, cls, text) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined && text !== null) el.textContent = String(text);
  return el;
}

function button(label, title, onClick) {
  const b = h("button", "gt-btn", label);
  b.type = "button";
  b.title = title;
  b.setAttribute("aria-label", title);
  b.addEventListener("click", onClick);
  return b;
}

// Parse the film's SVG as XML and keep only drawing elements and harmless attributes.
function parseSvg(text) {
  if (!text) return null;
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.localName !== "svg" || svg.namespaceURI !== SVG_NS) return null;
  if (doc.getElementsByTagName("parsererror").length) return null;
  for (const el of Array.from(svg.querySelectorAll("*"))) {
    if (!DRAWING.has(el.localName) || el.namespaceURI !== SVG_NS) {
      el.remove();
      continue;
    }
    for (const attr of Array.from(el.attributes)) {
      const name = attr.name.toLowerCase();
      if (name.startsWith("on") || name.endsWith("href") || name === "style") el.removeAttribute(attr.name);
    }
  }
  return document.importNode(svg, true);
}

// One copy of the film's SVG, indexed by element id, ready to show any frame.
function makePicture(film, onPick, svgText) {
  const svg = parseSvg(svgText === undefined ? film.svg : svgText);
  const wrap = h("div", "gt-picture");
  if (!svg) {
    wrap.appendChild(h("p", "gt-muted", "(no picture)"));
    return { el: wrap, apply() {}, select() {} };
  }
  const viewBox = (svg.getAttribute("viewBox") || "").split(/\s+/).map(Number);
  if (viewBox.length === 4 && viewBox.every(Number.isFinite)) {
    svg.setAttribute("width", String(viewBox[2]));
    svg.setAttribute("height", String(viewBox[3]));
  }
  // a very wide picture keeps a readable size and scrolls, rather than shrinking to a strip
  svg.setAttribute("class", viewBox.length === 4 && viewBox[2] > 1800 ? "gt-svg gt-wide" : "gt-svg");
  svg.setAttribute("role", "img");
  const items = new Map();
  for (const g of Array.from(svg.querySelectorAll("g[id]"))) {
    const id = g.getAttribute("id");
    if (id === "gt-names") {
      g.setAttribute("class", "cluster gt-names");
      items.set(id, { g, base: "cluster gt-names", texts: [] });
      continue;
    }
    const info = film.elements[id];
    if (!info) continue;
    const edge = info.group === "edge";
    const shapes = Array.from(g.children).filter((c) => c.localName === "polygon" || c.localName === "path");
    if (edge) {
      for (const s of shapes) s.setAttribute("class", s.localName === "path" ? "gt-line" : "gt-head");
    } else {
      const bg = shapes.find((s) => s.getAttribute("fill") && s.getAttribute("fill") !== "none");
      for (const s of shapes) s.setAttribute("class", s === bg ? "gt-bg" : "gt-border");
      g.addEventListener("click", (ev) => {
        ev.stopPropagation();
        onPick(id);
      });
    }
    const texts = Array.from(g.querySelectorAll("text"));
    items.set(id, { g, base: edge ? "edge" : "node", texts });
  }
  wrap.appendChild(svg);
  let selected = null;

  function apply(frame) {
    const visible = new Set(frame.visible);
    for (const [id, item] of items) {
      const shown = visible.has(id);
      const cls = frame.classes[id] || "";
      const sel = id === selected ? " gt-selected" : "";
      item.g.setAttribute("class", `${item.base} ${cls}${shown ? "" : " gt-hidden"}${sel}`);
      if (!shown) continue;
      const ref = frame.texts[id];
      if (ref === undefined) continue;
      const rows = film.rows[ref];
      item.texts.forEach((t, i) => {
        const row = rows[i];
        t.textContent = row ? row[0] : "";
        t.setAttribute("class", row && row[1] ? `gt-row gt-row-${row[1]}` : "gt-row");
      });
    }
  }

  function select(id) {
    selected = id;
  }

  return { el: wrap, apply, select };
}

function sourcePanel(source) {
  const pre = h("div", "gt-source");
  pre.setAttribute("role", "list");
  const lines = source.replace(/\n$/, "").split("\n");
  const rows = lines.map((line, i) => {
    const row = h("div", "gt-srcline");
    row.appendChild(h("span", "gt-lineno", String(i + 1)));
    row.appendChild(h("span", "gt-code", line === "" ? " " : line));
    pre.appendChild(row);
    return row;
  });
  let current = null;
  return {
    el: pre,
    highlight(lineno) {
      if (current) current.classList.remove("gt-current");
      current = rows[lineno - 1] || null;
      if (current) {
        current.classList.add("gt-current");
        const top = current.offsetTop - pre.offsetTop;
        if (top < pre.scrollTop || top > pre.scrollTop + pre.clientHeight - current.offsetHeight) {
          pre.scrollTop = Math.max(0, top - pre.clientHeight / 3);
        }
      }
    },
  };
}

function legendPanel(film) {
  const box = h("div", "gt-legend");
  for (const item of film.legend || []) {
    const entry = h("span", "gt-legend-item");
    entry.appendChild(h("span", `gt-chip ${item.class}`));
    entry.appendChild(document.createTextNode(item.label));
    box.appendChild(entry);
  }
  for (const item of film.marks || []) {
    const entry = h("span", "gt-legend-item");
    entry.appendChild(h("span", `gt-chip gt-chip-mark ${item.class}`));
    entry.appendChild(document.createTextNode(item.label));
    box.appendChild(entry);
  }
  return box;
}

function fillList(list, items, cls) {
  list.textContent = "";
  for (const text of items) list.appendChild(h("li", cls, text));
}

function fillDetails(panel, detail, missing) {
  panel.textContent = "";
  if (!detail) {
    panel.appendChild(h("p", "gt-muted", missing));
    return;
  }
  panel.appendChild(h("h4", "gt-details-title", detail.title));
  const table = h("table", "gt-details-table");
  for (const [label, value] of detail.fields) {
    const tr = h("tr");
    tr.appendChild(h("th", null, label));
    const td = h("td", null, value);
    if (/stale/.test(value)) td.className = "gt-stale-text";
    else if (/freed/.test(value)) td.className = "gt-muted";
    tr.appendChild(td);
    table.appendChild(tr);
  }
  panel.appendChild(table);
}

export function mount(el, film, options = {}) {
  const steps = film.steps || [];
  const n = steps.length;
  const state = { pos: 0, timer: null, selected: null, compare: false };
  const cleanups = [];
  el.textContent = "";
  const root = h("div", "gt-root");
  root.tabIndex = 0;
  root.setAttribute("role", "application");
  root.setAttribute("aria-label", `gradtrace stepper: ${film.title || ""}`);
  el.appendChild(root);

  const header = h("div", "gt-header");
  header.appendChild(h("span", "gt-title", film.title || "gradtrace"));
  const status = h("span", "gt-status");
  header.appendChild(status);
  root.appendChild(header);

  const controls = h("div", "gt-controls");
  const first = button("|◀", "first step (Home)", () => show(0));
  const prev = button("◀ prev", "previous step (←)", () => show(state.pos - 1));
  const play = button("play", "play / pause (space)", () => (state.timer ? pause() : startPlay()));
  const next = button("next ▶", "next step (→)", () => show(state.pos + 1));
  next.classList.add("gt-next");
  const last = button("▶|", "last step (End)", () => show(n - 1));
  const slider = h("input", "gt-slider");
  slider.type = "range";
  slider.min = "0";
  slider.max = String(Math.max(n - 1, 0));
  slider.value = "0";
  slider.setAttribute("aria-label", "step");
  slider.addEventListener("input", () => show(Number(slider.value)));
  const compareBtn = button("before / after backward()", "compare the graph just before and after backward()", () =>
    toggleCompare(),
  );
  compareBtn.classList.add("gt-compare-btn");
  if (!(film.backward || []).length) compareBtn.disabled = true;
  for (const b of [first, prev, play, next, last]) controls.appendChild(b);
  controls.appendChild(slider);
  controls.appendChild(compareBtn);
  root.appendChild(controls);

  const body = h("div", "gt-body");
  const side = h("div", "gt-side");
  const source = sourcePanel(film.source || "");
  side.appendChild(h("div", "gt-heading", "code"));
  side.appendChild(source.el);
  side.appendChild(h("div", "gt-heading", "what this step did"));
  const events = h("ul", "gt-events");
  events.setAttribute("aria-live", "polite");
  side.appendChild(events);
  const predictions = h("ul", "gt-predictions");
  side.appendChild(predictions);
  const reverseHead = h("div", "gt-heading", "reverse pass, in numbers");
  const reverse = h("pre", "gt-reverse");
  side.appendChild(reverseHead);
  side.appendChild(reverse);
  side.appendChild(h("div", "gt-heading", "details (click a box)"));
  const details = h("div", "gt-details");
  side.appendChild(details);
  body.appendChild(side);

  const main = h("div", "gt-main");
  // a big (folded) trace comes in sheets, one layout for each run of steps
  const sheets = film.sheets && film.sheets.length ? film.sheets : [film.svg];
  const sheetPictures = new Map();
  function sheetPicture(k) {
    if (!sheetPictures.has(k)) sheetPictures.set(k, makePicture(film, (id) => pick(id), sheets[k]));
    return sheetPictures.get(k);
  }
  let picture = sheetPicture(0);
  const graph = h("div", "gt-graph");
  graph.appendChild(picture.el);
  graph.addEventListener("click", () => pick(null));
  main.appendChild(graph);
  const compare = h("div", "gt-compare gt-off");
  main.appendChild(compare);
  main.appendChild(legendPanel(film));
  body.appendChild(main);
  root.appendChild(body);

  let pictures = null; // before/after copies, made on first use

  function frameOf(i) {
    return film.frames[steps[i].frame];
  }

  function pick(id) {
    state.selected = id;
    picture.select(id);
    render();
  }

  function renderDetails(step) {
    if (!state.selected) {
      fillDetails(details, null, "Click a name, tensor or node in the picture.");
      return;
    }
    const ref = step.details[state.selected];
    fillDetails(details, ref === undefined ? null : film.details[ref], "Not alive at this step.");
  }

  function renderCompare() {
    compare.classList.toggle("gt-off", !state.compare);
    compareBtn.setAttribute("aria-pressed", state.compare ? "true" : "false");
    if (!state.compare) return;
    const pairs = film.backward || [];
    const pair = pairs.find((p) => p.step === state.pos) || pairs.find((p) => p.step > state.pos) || pairs[pairs.length - 1];
    const idx = [pair.before, pair.step];
    const wanted = idx.map((i) => steps[i].sheet || 0);
    if (pictures && pictures.sheets.some((k, j) => k !== wanted[j])) pictures = null;
    if (!pictures) {
      pictures = [makePicture(film, () => {}, sheets[wanted[0]]), makePicture(film, () => {}, sheets[wanted[1]])];
      const labels = [h("div", "gt-heading"), h("div", "gt-heading")];
      compare.textContent = "";
      pictures.forEach((p, k) => {
        const col = h("div", "gt-compare-col");
        col.appendChild(labels[k]);
        col.appendChild(p.el);
        compare.appendChild(col);
      });
      pictures.labels = labels;
      pictures.sheets = wanted;
    }
    pictures.forEach((p, k) => {
      const s = steps[idx[k]];
      pictures.labels[k].textContent = `${k ? "after" : "before"}: step ${s.index}, line ${s.lineno}: ${s.code}`;
      p.apply(frameOf(idx[k]));
    });
  }

  function render() {
    if (!n) {
      status.textContent = "no steps recorded";
      return;
    }
    const step = steps[state.pos];
    status.textContent = `step ${state.pos + 1} of ${n} · line ${step.lineno}`;
    root.dataset.step = String(state.pos);
    slider.value = String(state.pos);
    prev.disabled = first.disabled = state.pos === 0;
    next.disabled = last.disabled = state.pos === n - 1;
    source.highlight(step.lineno);
    const shown = sheetPicture(step.sheet || 0);
    if (shown !== picture) {
      graph.replaceChild(shown.el, picture.el);
      picture = shown;
      picture.select(state.selected);
    }
    picture.apply(frameOf(state.pos));
    const words = step.events.length ? step.events : ["(nothing changed in the graph or the names)"];
    fillList(events, words, "gt-event");
    const warnings = step.predictions.slice();
    if (state.pos === n - 1 && film.error) warnings.push(`stopped: ${film.error}`);
    if (state.pos === n - 1 && film.steps_unrecorded) {
      warnings.push(`${film.steps_unrecorded} more steps ran but were not recorded`);
    }
    fillList(predictions, warnings, "gt-warning");
    const lines = step.reverse || [];
    reverse.textContent = lines.join("\n");
    reverseHead.classList.toggle("gt-off", !lines.length);
    reverse.classList.toggle("gt-off", !lines.length);
    renderDetails(step);
    renderCompare();
  }

  function show(i) {
    if (!n) return;
    state.pos = Math.min(Math.max(0, i), n - 1);
    render();
    if (typeof options.onStep === "function") options.onStep(state.pos);
  }

  function startPlay() {
    if (state.pos >= n - 1) show(0);
    play.textContent = "pause";
    state.timer = setInterval(() => {
      if (state.pos >= n - 1) pause();
      else show(state.pos + 1);
    }, options.interval || 900);
  }

  function pause() {
    if (state.timer) clearInterval(state.timer);
    state.timer = null;
    play.textContent = "play";
  }

  function toggleCompare() {
    state.compare = !state.compare;
    if (state.compare) {
      const pairs = film.backward || [];
      const pair = pairs.find((p) => p.step >= state.pos) || pairs[pairs.length - 1];
      if (pair) state.pos = pair.step;
    }
    render();
  }

  function onKey(ev) {
    if (ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const tag = ev.target && ev.target.tagName;
    if (tag === "TEXTAREA" || (tag === "INPUT" && ev.target !== slider)) return;
    const keys = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
    if (ev.key in keys) show(state.pos + keys[ev.key]);
    else if (ev.key === "Home") show(0);
    else if (ev.key === "End") show(n - 1);
    else if (ev.key === " " && ev.target === root) state.timer ? pause() : startPlay();
    else return;
    ev.preventDefault();
  }

  const keyTarget = options.globalKeys ? el.ownerDocument : root;
  keyTarget.addEventListener("keydown", onKey);
  cleanups.push(() => keyTarget.removeEventListener("keydown", onKey));

  show(options.step || 0);

  return {
    show,
    next: () => show(state.pos + 1),
    prev: () => show(state.pos - 1),
    play: startPlay,
    pause,
    get step() {
      return state.pos;
    },
    destroy() {
      pause();
      for (const f of cleanups) f();
      el.textContent = "";
    },
  };
}

// anywidget entry point: the widget's model carries the film under "film".
export default {
  render({ model, el }) {
    let stepper = mount(el, model.get("film"), { step: model.get("step") || 0, onStep: (i) => {
      model.set("step", i);
      model.save_changes();
    } });
    const onFilm = () => {
      stepper.destroy();
      stepper = mount(el, model.get("film"));
    };
    model.on("change:film", onFilm);
    return () => {
      model.off("change:film", onFilm);
      stepper.destroy();
    };
  },
};
