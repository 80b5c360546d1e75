// gradtrace stepper: shows a film (gradtrace/render/film.py) one step at a time.
//
// ONE dependency-free ES module, shipped unchanged three ways:
//   - the standalone page (render/html.py) and the notebook's static HTML (notebook/embed.py)
//     put the film in <script type="application/json" data-gt-film="<target id>"> and this
//     module after it; `boot()` below mounts every such film once;
//   - the anywidget (notebook/widget.py) loads this module as its ESM; its default export is { render }.
// `mount(el, film, options)` draws the stepper into `el` and returns a controller
// {show(i), next(), prev(), play(), pause(), destroy(), get step()}; it opens at `options.step`, or else at
// the first step that changes something (`firstChange`); its legend lists what the shown picture uses. It keeps
// no global state: all state lives in one mount's closure, so several steppers can share a page.
//
// Safety: learner text (names, code, values, op names) only reaches the page through
// textContent or SVG text nodes, never as markup, and control/format characters (bidi
// overrides included) are shown escaped, as the text twin does. The film's SVG is our own
// Graphviz output; it is parsed as XML and cleaned of anything but drawing before use.
//
// The helpers that read a film and touch no page (esc, brief, loopJumps, eventKinds, diffOf, ...) are
// named exports too: tests/js/ runs them in plain Node (`node --test tests/js/`). Importing this module
// where there is no document runs nothing.

const SVG_NS = "http://www.w3.org/2000/svg";
const DRAWING = new Set(["svg", "g", "title", "polygon", "path", "text", "ellipse", "polyline", "tspan"]);
// the Unicode categories render/words.py `clean` escapes: Cc Cf Zl Zp Cs Co Cn (tab and newline kept here)
const CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]/gu;

/** `text` with control and format characters (bidi overrides, zero-width marks) shown as \uXXXX. */
export function esc(text) {
  return String(text).replace(CONTROL, (ch) => {
    if (ch === "\n") return ch;
    if (ch === "\t") return " ";
    const code = ch.codePointAt(0);
    if (code < 0x100) return "\\x" + code.toString(16).padStart(2, "0");
    if (code < 0x10000) return "\\u" + code.toString(16).padStart(4, "0");
    return "\\U" + code.toString(16).padStart(8, "0");
  });
}

function h(tag, cls, text) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined && text !== null) el.textContent = esc(text);
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

function svgEl(tag, attrs) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  return el;
}

// Parse the film's SVG as XML and keep only drawing elements and harmless attributes.
function parseSvg(text) {
  if (!text) return null;
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.localName !== "svg" || svg.namespaceURI !== SVG_NS) return null;
  if (doc.getElementsByTagName("parsererror").length) return null;
  // the root too: an onload on <svg> itself runs where the page has no CSP (JupyterLab)
  for (const el of [svg, ...Array.from(svg.querySelectorAll("*"))]) {
    if (!DRAWING.has(el.localName) || el.namespaceURI !== SVG_NS) {
      el.remove();
      continue;
    }
    for (const attr of Array.from(el.attributes)) {
      const name = attr.name.toLowerCase();
      if (name.startsWith("on") || name.endsWith("href") || name === "style") el.removeAttribute(attr.name);
    }
  }
  for (const t of Array.from(svg.querySelectorAll("text"))) t.textContent = esc(t.textContent);
  return document.importNode(svg, true);
}

// ------------------------------------------------------------------ the picture

/** Where the stepper opens: the first step that changes something (a tensor, the graph, a name bound to a
 *  tensor, a .grad, an error), so a docstring or an `import torch` does not greet the learner with an empty
 *  picture; 0 when no step does. The steps before it stay one Home or ◀ away. */
export function firstChange(film) {
  const steps = film.steps || [];
  const i = steps.findIndex((s, j) => (s.events || []).length || (s.reverse || []).length || s.explanation
    || (s.culprits || []).length || j === film.error_step);
  return Math.max(i, 0);
}

/** The number a person reads for a step: 1 for the first (the film's `index` + 1, as the text twin,
 *  explain_error and the command line's step-NNNN files number it). */
export function stepNumber(step) {
  return step.index + 1;
}

/** A value as the picture shows it: past `max` characters a tensor's elements are cut to the first one
 *  (`[[-0.16695413, …]]`); a number is never cut (no digit is dropped). The panels and the text twin
 *  show every value whole. */
export function brief(text, max) {
  const value = String(text);
  if (value.length <= max) return value;
  const head = /^([^[\s]*\s)?(\[+)([^,\]]+)/.exec(value);
  if (head) {
    const cut = `${head[1] || ""}${head[2]}${head[3].trim()}, …${"]".repeat(head[2].length)}`;
    if (cut.length < value.length) return cut;
  }
  return value;
}

// What a step is about, for scrolling a wide picture to it (see reveal() in mount): the node the reverse pass
// is at while it is walked, what backward() changed in the before/after view, else what the step marked.
const FOCUS = {
  walk: "g.gt-box.gt-flow-now",
  diff: "g.gt-box.gt-diff-grad, g.gt-box.gt-diff-kept",
  step: ["gt-m-created", "gt-m-moved", "gt-m-mutated", "gt-m-grad", "gt-m-culprit", "gt-m-stale"]
    .map((c) => `g.gt-box.${c}`).join(", "),
};

// Where a gradient label may sit around a point of its edge: [dx, dy, text-anchor].
const PLACES = [[4, -4, "start"], [4, 14, "start"], [-4, -4, "end"], [-4, 14, "end"], [0, -8, "middle"],
  [0, 20, "middle"], [0, -20, "middle"], [0, 32, "middle"], [0, -32, "middle"], [0, 44, "middle"]];

// One copy of a sheet's SVG, indexed by element id, ready to show any frame.
function makePicture(film, onPick, svgText) {
  const svg = parseSvg(svgText);
  const wrap = h("div", "gt-picture");
  const empty = { el: wrap, svg: null, items: new Map(), apply() {}, select() {}, zoom() {}, size: [0, 0] };
  if (!svg) {
    wrap.appendChild(h("p", "gt-muted", "(no picture)"));
    return empty;
  }
  const box = (svg.getAttribute("viewBox") || "").split(/\s+/).map(Number);
  const size = box.length === 4 && box.every(Number.isFinite) ? [box[2], box[3]] : [800, 400];
  svg.setAttribute("class", "gt-svg");
  svg.setAttribute("aria-hidden", "true"); // the text twin (see textTwin) speaks for it
  svg.setAttribute("focusable", "false");
  const layer = svgEl("g", { class: "gt-overlay" }); // edge labels and diff tags, in the drawing's coordinates
  const graph0 = svg.querySelector("g") || svg;
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
        onPick(id, g);
      });
    }
    const texts = Array.from(g.querySelectorAll("text"));
    items.set(id, { g, base: edge ? "edge" : "node", texts, info });
  }
  graph0.appendChild(layer);
  wrap.appendChild(svg);
  let selected = null;
  let extra = new Map(); // id -> extra classes for this view (flow, diff, culprits)

  function apply(frame, more) {
    extra = more || new Map();
    const visible = new Set(frame.visible);
    for (const [id, item] of items) {
      const shown = visible.has(id);
      const cls = frame.classes[id] || "";
      const sel = id === selected ? " gt-selected" : "";
      const add = extra.has(id) ? ` ${extra.get(id)}` : "";
      item.g.setAttribute("class", `${item.base} ${cls}${add}${shown ? "" : " gt-hidden"}${sel}`);
      if (!shown) continue;
      const ref = frame.texts[id];
      if (ref === undefined) continue;
      const rows = film.rows[ref];
      item.texts.forEach((t, i) => {
        const row = rows[i];
        t.textContent = row ? esc(row[0]) : "";
        t.setAttribute("class", row && row[1] ? `gt-row gt-row-${row[1]}` : "gt-row");
      });
    }
    layer.textContent = "";
  }

  // A label on an edge's line (the gradient flowing along it): near the middle, clear of the boxes.
  function labelEdge(id, text) {
    const item = items.get(id);
    const path = item && item.g.querySelector("path");
    if (!path || typeof path.getTotalLength !== "function") return null;
    const t = svgEl("text", { class: "gt-flow-label", "text-anchor": "start", "data-edge": id, "data-full": text });
    t.textContent = esc(brief(text, 16));
    layer.appendChild(t);
    const boxes = [];
    for (const other of items.values()) {
      if (other.base !== "node" || /\bgt-hidden\b/.test(other.g.getAttribute("class") || "")) continue;
      boxes.push(other.g.getBBox());
    }
    for (const label of layer.querySelectorAll("text")) if (label !== t) boxes.push(label.getBBox());
    const total = path.getTotalLength();
    let best = null;
    for (const at of [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.1, 0.9]) {
      const p = path.getPointAtLength(total * at);
      for (const [dx, dy, anchor] of PLACES) {
        t.setAttribute("x", String(p.x + dx));
        t.setAttribute("y", String(p.y + dy));
        t.setAttribute("text-anchor", anchor);
        const b = t.getBBox();
        const hits = boxes.reduce((sum, o) => sum + Math.max(0, Math.min(b.x + b.width, o.x + o.width) - Math.max(b.x, o.x))
          * Math.max(0, Math.min(b.y + b.height, o.y + o.height) - Math.max(b.y, o.y)), 0);
        if (best === null || hits < best.hits) best = { hits, x: p.x + dx, y: p.y + dy, anchor };
        if (hits === 0) return t;
      }
    }
    t.setAttribute("x", String(best.x));
    t.setAttribute("y", String(best.y));
    t.setAttribute("text-anchor", best.anchor);
    return t;
  }

  // A tag beside a box (diff view: "freed", ".grad 0 → 5376", "kept"): above it or below it, flush with its
  // left or right side, the first such place that covers no box, name or other tag and stays in the drawing
  // (a box's second tag so goes where its first is not).
  function tagBox(id, text, cls) {
    const item = items.get(id);
    if (!item || typeof item.g.getBBox !== "function") return null;
    const b = item.g.getBBox();
    const t = svgEl("text", { class: `gt-tag ${cls}`, "data-box": id, "data-full": text });
    t.textContent = esc(text.split(" → ").map((part) => brief(part, 16)).join(" → "));
    const bounds = graph0.getBBox();
    layer.appendChild(t);
    const obstacles = [];
    for (const other of items.values()) {
      if (other.base === "edge" || /\bgt-hidden\b/.test(other.g.getAttribute("class") || "")) continue;
      if (other.base === "cluster gt-names") {
        for (const g of other.g.ownerSVGElement.querySelectorAll('g[id^="gt-name"]:not(#gt-names)')) {
          if (!/\bgt-hidden\b/.test(g.getAttribute("class") || "")) obstacles.push(g.getBBox());
        }
        continue;
      }
      obstacles.push(other.g.getBBox());
    }
    for (const label of layer.querySelectorAll("text")) if (label !== t) obstacles.push(label.getBBox());
    const pad = (o) => ({ x: o.x - 2, y: o.y - 2, width: o.width + 4, height: o.height + 4 });
    obstacles.splice(0, obstacles.length, ...obstacles.map(pad));
    const lift = (k) => b.y - 5 - k * 17;
    const drop = (k) => b.y + b.height + 15 + k * 17;
    const places = [];
    for (let k = 0; k < 3; k++) {
      for (const y of [lift(k), drop(k)]) places.push([b.x, y, "start"], [b.x + b.width, y, "end"]);
    }
    for (let y = b.y + 14; y < b.y + b.height + 4; y += 17) places.push([b.x + b.width + 6, y, "start"], [b.x - 6, y, "end"]);
    for (const [x, y, anchor] of places) {
      t.setAttribute("x", String(x));
      t.setAttribute("y", String(y));
      t.setAttribute("text-anchor", anchor);
      const r = t.getBBox();
      const over = (o) => Math.max(0, Math.min(r.x + r.width, o.x + o.width) - Math.max(r.x, o.x))
        * Math.max(0, Math.min(r.y + r.height, o.y + o.height) - Math.max(r.y, o.y));
      const outside = r.width * r.height - over(bounds);
      if (outside < 0.5 && obstacles.every((o) => over(o) === 0)) return t;
    }
    // no room beside this box (a crowded layout): no tag, rather than one over other boxes; the box's own
    // mark and the banner above the picture, which lists every change, still say it
    t.remove();
    return null;
  }

  // Set one row of a box's text (the .grad row while the reverse pass is walked).
  function setRow(id, pick, text, cls) {
    const item = items.get(id);
    if (!item) return;
    const t = item.texts.find(pick);
    if (!t) return;
    // as long as the box is wide (the box was laid out for the film's rows, not for this text)
    const wide = t.textContent.length ? t.getComputedTextLength() / t.textContent.length : 0;
    const room = wide > 0 ? Math.max(8, Math.floor((item.g.getBBox().width - 10) / wide)) : 24;
    t.textContent = esc(brief(text, room));
    t.setAttribute("class", `gt-row ${cls}`);
  }

  function zoom(z) {
    svg.setAttribute("width", String(size[0] * z));
    svg.setAttribute("height", String(size[1] * z));
  }
  zoom(1);

  return {
    el: wrap, svg, items, size, apply, labelEdge, tagBox, setRow, zoom,
    select(id) {
      selected = id;
    },
  };
}

// The picture as words, for screen readers (and for anyone, with the "text" button).
export function pictureText(film, frame) {
  const lines = [];
  const visible = new Set(frame.visible);
  const names = [];
  for (const id of frame.visible) {
    const info = film.elements[id];
    if (!info) continue;
    if (info.group === "edge") {
      const m = /^gt-e-name-(.+)-([^-]+)$/.exec(id);
      if (m && visible.has("gt-" + m[1])) {
        const name = film.elements["gt-" + m[1]];
        names.push(`${name ? name.label : m[1]} → ${m[2]}`);
      }
      continue;
    }
    if (info.group === "name") continue;
    const ref = frame.texts[id];
    const rows = ref === undefined ? [] : film.rows[ref].map((r) => r[0]);
    const marks = (frame.classes[id] || "").split(/\s+/).filter((c) => c.startsWith("gt-m-")).map((c) => c.slice(5));
    lines.push(rows.join(", ") + (marks.length ? ` [${marks.join(", ")}]` : ""));
  }
  return { names, boxes: lines };
}

// ------------------------------------------------------------------ panels

function codePanel(source) {
  const pre = h("div", "gt-source");
  pre.setAttribute("role", "list");
  pre.setAttribute("aria-label", "code");
  pre.tabIndex = 0;
  const lines = source.replace(/\n$/, "").split("\n");
  const rows = lines.map((line, i) => {
    const row = h("div", "gt-srcline");
    row.setAttribute("role", "listitem");
    row.appendChild(h("span", "gt-lineno", String(i + 1)));
    row.appendChild(h("span", "gt-code", line === "" ? " " : line));
    pre.appendChild(row);
    return row;
  });
  let current = null;
  return {
    el: pre,
    show(lineno) {
      if (current) {
        current.classList.remove("gt-current");
        current.removeAttribute("aria-current");
      }
      current = rows[lineno - 1] || null;
      if (!current) return;
      current.classList.add("gt-current");
      current.setAttribute("aria-current", "step");
      scrollInside(pre, current);
    },
  };
}

// Scroll `box` (not the page) so that `row` shows.
function scrollInside(box, row) {
  const top = row.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
  if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - row.offsetHeight) {
    box.scrollTop = Math.max(0, top - box.clientHeight / 3);
  }
}

function fillList(list, items, cls) {
  list.textContent = "";
  for (const text of items) list.appendChild(h("li", cls, text));
}

// The labels an error's plain words start their lines with (explain_error's text).
const LABEL = /^\s*((?:What happened|Why|Fix|Involved|Saved by|Changed at [^:]*|PyTorch's message|stopped):)/;

// "what this step did": events, the error's plain-words explanation, one prediction.
function eventsPanel() {
  const el = h("div", "gt-what");
  const events = h("ul", "gt-events");
  const explanation = h("p", "gt-explanation gt-off");
  explanation.tabIndex = 0; // it may scroll: the keyboard can reach it
  const warnings = h("ul", "gt-predictions");
  el.append(events, explanation, warnings);
  el.setAttribute("aria-live", "polite");
  return {
    el,
    show({ events: ev, explanation: words, warnings: warn }) {
      fillList(events, ev.length ? ev : ["(nothing changed in the graph or the names)"], "gt-event");
      explanation.textContent = "";
      // each part of the plain words starts on its own line with its label in bold (what happened, why, fix…)
      for (const [i, line] of (words ? esc(words) : "").split("\n").entries()) {
        if (i) explanation.appendChild(document.createTextNode("\n"));
        const label = LABEL.exec(line);
        if (label) explanation.append(h("b", null, label[1]), document.createTextNode(line.slice(label[1].length)));
        else explanation.appendChild(document.createTextNode(line));
      }
      explanation.classList.toggle("gt-off", !words);
      fillList(warnings, warn, "gt-warning");
    },
  };
}

// The reverse pass in numbers, with the current node's lines marked and kept in view.
function reversePanel() {
  const head = h("div", "gt-heading", "reverse pass, in numbers");
  const box = h("div", "gt-reverse");
  box.tabIndex = 0;
  box.setAttribute("aria-label", "reverse pass, in numbers");
  return {
    head, el: box,
    show(lines, current) {
      box.textContent = "";
      head.classList.toggle("gt-off", !lines.length);
      box.classList.toggle("gt-off", !lines.length);
      let first = null;
      lines.forEach((line, i) => {
        const row = h("div", "gt-revline", line);
        if (current.has(i)) {
          row.classList.add("gt-current");
          first = first || row;
        }
        box.appendChild(row);
      });
      if (first) scrollInside(box, first);
    },
  };
}

// A legend chip drawn with the picture's own classes, so it shows exactly the picture's marks.
function chip(groupClass, shape) {
  const svg = svgEl("svg", { width: 30, height: 14, class: "gt-svg gt-chip-svg", "aria-hidden": "true" });
  const g = svgEl("g", { class: groupClass });
  if (shape === "line") g.appendChild(svgEl("path", { d: "M1,7 L29,7", class: "gt-line" }));
  else {
    g.appendChild(svgEl("rect", { x: 2, y: 2, width: 26, height: 10, rx: 2, class: "gt-bg" }));
    g.appendChild(svgEl("rect", { x: 2, y: 2, width: 26, height: 10, rx: 2, class: "gt-border" }));
  }
  svg.appendChild(g);
  return svg;
}

function legendPanel(film) {
  const box = h("div", "gt-legend");
  box.setAttribute("role", "list");
  box.setAttribute("aria-label", "legend of this step's picture");
  const chips = { fill: (cls) => chip(`node gt-box ${cls}`, "box"), mark: (cls) => chip(`node gt-box gt-k-const ${cls}`, "box"),
    line: (cls) => chip(`edge gt-edge ${cls}`, "line") };
  let said = null;
  return {
    el: box,
    show(frame, more) {
      const items = legendItems(film, frameClasses(frame, more));
      const key = items.map((i) => i.cls).join("|");
      if (key === said) return; // the same legend: keep its elements
      said = key;
      box.textContent = "";
      box.classList.toggle("gt-off", !items.length); // an empty picture has no legend (nor an empty list)
      for (const item of items) {
        const entry = h("span", "gt-legend-item");
        entry.setAttribute("role", "listitem");
        entry.append(chips[item.kind](item.cls), document.createTextNode(esc(item.label)));
        box.appendChild(entry);
      }
    },
  };
}

/** The class lists of the elements a frame shows (each a Set), with the classes `more` adds (a culprit, a diff). */
export function frameClasses(frame, more = new Map()) {
  const used = [];
  for (const id of frame.visible || []) {
    const cls = `${(frame.classes || {})[id] || ""} ${more.get(id) || ""}`.trim();
    if (cls) used.push(new Set(cls.split(/\s+/)));
  }
  return used;
}

/** The legend entries for a picture whose elements carry the class lists `used` (null: every entry), in the
 *  film's order: fills, marks, then line styles, each `{kind: "fill"|"mark"|"line", cls, label}`. */
export function legendItems(film, used) {
  const shows = (cls) => used === null || used.some((have) => cls.split(/\s+/).every((c) => have.has(c)));
  const lines = Array.isArray(film.lines) && film.lines.length ? film.lines.map((l) => [l.class, l.label]) : LINES;
  return [
    ...(film.legend || []).map((i) => ({ kind: "fill", cls: i.class, label: i.label })),
    ...(film.marks || []).map((i) => ({ kind: "mark", cls: i.class, label: i.label })),
    ...lines.map(([cls, label]) => ({ kind: "line", cls, label })),
  ].filter((item) => shows(item.cls));
}

// The class lists the film's pictures use (each element's, in any frame): what the whole trace can show;
// null for a film too big to read them all.
export function usedClasses(film) {
  const frames = film.frames || [];
  if (frames.length > 5000) return null;
  const seen = new Set();
  for (const frame of frames) for (const cls of Object.values(frame.classes || {})) seen.add(cls);
  const used = Array.from(seen, (cls) => new Set(cls.split(/\s+/)));
  if ((film.steps || []).some((s) => s.culprits && s.culprits.length)) used.push(new Set(["gt-m-culprit"]));
  if ((film.backward || []).some((p) => p.diff && p.diff.freed && p.diff.freed.length)) {
    used.push(new Set(["gt-m-freed", "gt-e-saved"]));
  }
  return used;
}

const LINES = [
  ["gt-e-name", "name → object"],
  ["gt-e-grad_fn", "grad_fn"],
  ["gt-e-next", "next_functions (gradient flows back along it)"],
  ["gt-e-saved", "saved for backward"],
  ["gt-e-saved gt-m-freed", "saved value freed"],
  ["gt-e-variable", "AccumulateGrad writes .grad of"],
];

// Details of one box, opened next to it and kept inside the window.
function detailsPopover(onClose) {
  const el = h("div", "gt-popover gt-details gt-off");
  el.setAttribute("role", "dialog");
  el.setAttribute("aria-label", "details");
  const close = button("×", "close details (Esc)", () => onClose());
  close.classList.add("gt-close");
  const body = h("div", "gt-popover-body");
  el.append(close, body);
  return {
    el,
    get open() {
      return !el.classList.contains("gt-off");
    },
    fill(detail, missing) {
      body.textContent = "";
      if (!detail) {
        body.appendChild(h("p", "gt-muted", missing));
        return;
      }
      body.appendChild(h("h4", "gt-details-title", detail.title));
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
      body.appendChild(table);
    },
    place(anchor, within) {
      el.classList.remove("gt-off");
      const a = anchor.getBoundingClientRect();
      const w = within.getBoundingClientRect();
      const view = { left: Math.max(0, w.left), top: Math.max(0, w.top),
        right: Math.min(window.innerWidth, w.right), bottom: Math.min(window.innerHeight, w.bottom) };
      el.style.maxHeight = `${Math.max(120, view.bottom - view.top - 16)}px`;
      const pw = el.offsetWidth;
      const ph = Math.min(el.offsetHeight, view.bottom - view.top - 16);
      let left = a.right + 8;
      if (left + pw > view.right - 8) left = a.left - pw - 8;
      left = Math.min(Math.max(view.left + 8, left), Math.max(view.left + 8, view.right - pw - 8));
      let top = Math.min(Math.max(view.top + 8, a.top), Math.max(view.top + 8, view.bottom - ph - 8));
      // fixed to the window: in place next to the box, whatever scrolls around it
      el.style.left = `${Math.round(left)}px`;
      el.style.top = `${Math.round(top)}px`;
    },
    hide() {
      el.classList.add("gt-off");
    },
  };
}

// ------------------------------------------------------------------ what a step is

// Which tensor each name refers to at a step (by the objects' own ids, read off the names' details).
export function nameTargets(film, step) {
  const out = new Map();
  for (const ref of Object.values(step.details || {})) {
    const d = film.details[ref];
    if (!d || d.type !== "name") continue;
    const field = d.fields.find((f) => f[0] === "names");
    if (field) out.set(d.id, field[1]);
  }
  return out;
}

/** The kinds of event of each step: "rebind", "mutate", "backward", "error" (film data, or read off the frames). */
export function eventKinds(film) {
  const steps = film.steps || [];
  const backward = new Set((film.backward || []).map((p) => p.step));
  let before = new Map();
  return steps.map((step, i) => {
    const frame = film.frames[step.frame];
    const now = nameTargets(film, step);
    if (Array.isArray(step.kinds)) {
      before = now;
      return new Set(step.kinds);
    }
    const kinds = new Set();
    for (const [name, target] of now) {
      if (before.has(name) && before.get(name) !== target) kinds.add("rebind");
    }
    if (Object.values(frame.classes).some((c) => /\bgt-m-mutated\b/.test(c))) kinds.add("mutate");
    if (backward.has(i) || step.events.some((e) => /^backward\(\)/.test(e))) kinds.add("backward");
    if ((step.culprits && step.culprits.length) || step.explanation || i === errorStep(film)) {
      kinds.add("error");
    }
    before = now;
    return kinds;
  });
}

const LOOP_HEAD = /^\s*(async\s+)?(for|while)\b/;
const DEF_HEAD = /^\s*(async\s+def|def|class)\b/;

// The block headers around line `lineno` of `lines` (1-based), innermost first, read off the indentation.
function headersAround(lines, lineno) {
  const here = lines[lineno - 1];
  const out = [];
  if (here === undefined) return out;
  let indent = here.length - here.trimStart().length;
  for (let k = lineno - 1; k >= 1 && indent > 0; k--) {
    const text = lines[k - 1].trimStart();
    const at = lines[k - 1].length - text.length;
    if (!text || text.startsWith("#") || at >= indent) continue;
    out.push(k);
    indent = at;
  }
  return out;
}

// Which loop each line runs in: `of(lineno)` is the header line of the innermost loop around it (the line itself
// when it is a loop's header; null outside any loop, and inside a def or class, whose body a loop around it
// does not run), `inside(lineno, head)` whether the line is that loop's or in its body, `called(lineno, head)`
// whether it is in a function the loop does not hold (a call made from the loop).
function loopLines(source) {
  const lines = String(source || "").split("\n");
  const cache = new Map();
  const around = (lineno) => {
    if (!cache.has(lineno)) cache.set(lineno, headersAround(lines, lineno));
    return cache.get(lineno);
  };
  const isDef = (k) => DEF_HEAD.test(lines[k - 1] || "");
  return {
    of(lineno) {
      if (LOOP_HEAD.test(lines[lineno - 1] || "")) return lineno;
      for (const k of around(lineno)) {
        if (isDef(k)) return null;
        if (LOOP_HEAD.test(lines[k - 1])) return k;
      }
      return null;
    },
    inside: (lineno, head) => lineno === head || around(lineno).includes(head),
    called: (lineno, head) => around(lineno).some((k) => isDef(k) && !around(head).includes(k)),
  };
}

// Inside the loop whose header is on line `head`: where the step's line runs in a later pass (null when it does not)
// and the first step after the loop (or the last step, when the loop ends the program; null from there).
function loopFrom(steps, pos, loops, head) {
  const line = steps[pos].lineno;
  const out = new Map(); // line -> whether a step on it is after the loop (a long loop repeats few lines)
  const after = (at) => {
    if (!out.has(at)) out.set(at, !loops.inside(at, head) && !loops.called(at, head));
    return out.get(at);
  };
  let next = -1;
  let pass = null;
  for (let j = pos + 1; j < steps.length; j++) {
    const at = steps[j].lineno;
    if (after(at)) return { pass, leave: j };
    if (at === head && next < 0) next = j; // the next pass starts (or, at the end, the loop's last check)
    if (pass === null && next >= 0 && at === line && (j > next || line !== head)) pass = j;
    if (pass === null && line === head && j === next + 1) pass = next; // a pass runs after that check
  }
  return { pass, leave: pos < steps.length - 1 ? steps.length - 1 : null };
}

/** Where "next pass" and "leave loop" go from `pos` (null when there is nowhere to go). In a loop (the innermost
 *  one around the step's line in `source`, read off its indentation) the next pass is where the step's line runs
 *  after the loop's header runs again, and leaving goes to the first step after the loop, or to the last step when
 *  the loop ends the program. A line in no loop (a function's, called again) goes to where it runs again, and
 *  out of it to the first step after the last time it runs whose line did not run in between. */
export function loopJumps(steps, pos, source = "") {
  const loops = loopLines(source);
  const head = loops.of(steps[pos].lineno);
  if (head !== null) return loopFrom(steps, pos, loops, head);
  const line = steps[pos].lineno;
  let again = -1;
  let last = -1;
  for (let j = pos + 1; j < steps.length; j++) {
    if (steps[j].lineno === line) {
      if (again < 0) again = j;
      last = j;
    }
  }
  if (again < 0) return { pass: null, leave: null };
  const body = new Set();
  for (let j = pos; j <= last; j++) body.add(steps[j].lineno);
  let leave = null;
  for (let j = last + 1; j < steps.length; j++) {
    if (!body.has(steps[j].lineno)) {
      leave = j;
      break;
    }
  }
  return { pass: again, leave };
}

// The reverse pass of a backward() step, one sub-step per node, in the engine's order.
export function flowOf(step) {
  return Array.isArray(step.flow) ? step.flow : [];
}

// Lines of the reverse-pass text that belong to one node (its "  nK Op: gets ..." line and what follows).
export function linesOfNode(lines, domId) {
  const id = domId.replace(/^gt-/, "");
  const out = new Set();
  let inside = false;
  lines.forEach((line, i) => {
    const m = /^ {2}(\S+) /.exec(line);
    if (m) inside = m[1] === id;
    else if (!/^ {4,}/.test(line)) inside = false;
    if (inside) out.add(i);
  });
  return out;
}

function gradRow(t) {
  return t.getAttribute("class") === "gt-row gt-row-grad" || /^grad /.test(t.textContent);
}

// What backward() changed: film data when present, else read off the frames before and after.
export function diffOf(film, pair) {
  if (pair.diff) return pair.diff;
  const before = film.frames[film.steps[pair.before].frame];
  const after = film.frames[film.steps[pair.step].frame];
  const freed = [];
  const kept = [];
  const grad = {};
  for (const id of after.visible) {
    const cls = after.classes[id] || "";
    if (/\bgt-m-freed\b/.test(cls)) freed.push(id);
    if (/\bgt-k-retained\b/.test(cls)) kept.push(id);
    const a = after.texts[id];
    const b = before.texts[id];
    if (a === undefined) continue;
    const rowA = film.rows[a].find((r) => r[1] === "grad" || /^grad /.test(r[0]));
    const rowB = b === undefined ? null : film.rows[b].find((r) => r[1] === "grad" || /^grad /.test(r[0]));
    const textA = rowA ? rowA[0].replace(/^grad /, "") : null;
    const textB = rowB ? rowB[0].replace(/^grad /, "") : "None";
    if (textA !== null && textA !== textB) grad[id] = `${textB === "-" ? "None" : textB} → ${textA === "-" ? "None" : textA}`;
  }
  return { freed, grad, kept };
}

// ------------------------------------------------------------------ saving a picture

const STYLE_PROPS = ["fill", "stroke", "stroke-width", "stroke-dasharray", "opacity", "font-weight", "font-size",
  "font-family", "paint-order"];

// The shown picture as a standalone SVG document: computed colours inlined, hidden parts dropped.
function pictureSvg(picture, background) {
  const live = picture.svg;
  const copy = live.cloneNode(true);
  const a = Array.from(live.querySelectorAll("*"));
  const b = Array.from(copy.querySelectorAll("*"));
  a.forEach((el, i) => {
    const out = b[i];
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || style.display === "none") {
      out.setAttribute("data-gt-drop", "1");
      return;
    }
    for (const p of STYLE_PROPS) {
      const v = style.getPropertyValue(p);
      if (v) out.setAttribute(p, v);
    }
    out.removeAttribute("class");
    out.removeAttribute("tabindex");
  });
  for (const el of Array.from(copy.querySelectorAll("[data-gt-drop]"))) el.remove();
  copy.removeAttribute("class");
  copy.removeAttribute("aria-hidden");
  copy.setAttribute("xmlns", SVG_NS);
  const [w, hgt] = picture.size;
  copy.setAttribute("width", String(w));
  copy.setAttribute("height", String(hgt));
  const bg = svgEl("rect", { x: -10000, y: -10000, width: 20000, height: 20000, fill: background });
  copy.insertBefore(bg, copy.firstChild);
  return new XMLSerializer().serializeToString(copy);
}

function download(doc, href, name) {
  const a = doc.createElement("a");
  a.href = href;
  a.download = name;
  a.style.display = "none";
  doc.body.appendChild(a);
  a.click();
  a.remove();
}

export function svgDataUrl(text) {
  return "data:image/svg+xml;charset=utf-8," + encodeURIComponent(text);
}

function savePng(doc, text, size, name, scale) {
  const img = new Image();
  img.onload = () => {
    const canvas = doc.createElement("canvas");
    canvas.width = Math.ceil(size[0] * scale);
    canvas.height = Math.ceil(size[1] * scale);
    const ctx = canvas.getContext("2d");
    ctx.scale(scale, scale);
    ctx.drawImage(img, 0, 0, size[0], size[1]);
    download(doc, canvas.toDataURL("image/png"), name);
  };
  img.src = svgDataUrl(text);
}

export function fileStem(film, step) {
  const base = String(film.title || film.filename || "gradtrace").replace(/[^A-Za-z0-9_.-]+/g, "_").replace(/^_+|_+$/g, "");
  return `${base || "gradtrace"}-step${stepNumber(step)}`;
}

// ------------------------------------------------------------------ controls

function controlsPanel(act) {
  const el = h("div", "gt-controls");
  el.setAttribute("role", "toolbar");
  el.setAttribute("aria-label", "stepper controls");
  const b = {
    first: button("|◀", "first step (Home)", () => act.show(0)),
    prev: button("◀ prev", "previous step (← or PageUp)", () => act.step(-1)),
    play: button("play", "play / pause (space)", () => act.play()),
    next: button("next ▶", "next step (→ or PageDown)", () => act.step(1)),
    last: button("▶|", "last step (End)", () => act.show(Infinity)),
    event: button("next event »", "next rebind, mutation, backward() or error (E; Shift+E goes back)", () => act.event(1)),
    pass: button("next pass ↻", "the loop's next pass (L)", () => act.loop("pass")),
    leave: button("leave loop ⤼", "jump out of the loop (Shift+L)", () => act.loop("leave")),
    walk: button("walk backward ▼", "walk the reverse pass node by node (↓; ↑ goes back)", () => act.walk(1)),
    diff: button("before / after", "what backward() changed, in one picture (D; B shows the other state)", () => act.diff()),
    before: button("show before", "show the state just before backward() (B)", () => act.before()),
    text: button("text", "show the picture as text (T)", () => act.text()),
    svg: button("save SVG", "save this step's picture as SVG", () => act.save("svg")),
    png: button("save PNG", "save this step's picture as PNG", () => act.save("png")),
    present: button("present", "presenter mode: full screen, large type (F; Esc leaves)", () => act.present()),
  };
  b.next.classList.add("gt-next");
  b.diff.classList.add("gt-compare-btn");
  b.walk.classList.add("gt-walk-btn");
  b.event.classList.add("gt-event-btn");
  b.present.classList.add("gt-present-btn");
  const slider = h("input", "gt-slider");
  slider.type = "range";
  slider.min = "0";
  slider.setAttribute("aria-label", "step");
  slider.addEventListener("input", () => act.show(Number(slider.value)));
  const list = h("select", "gt-steplist");
  list.setAttribute("aria-label", "step list");
  list.addEventListener("change", () => act.show(Number(list.value)));
  const group = (cls, items) => {
    const g = h("div", `gt-group ${cls}`);
    g.append(...items);
    return g;
  };
  el.append(
    group("gt-nav", [b.first, b.prev, b.play, b.next, b.last, slider, list]),
    group("gt-jump", [b.event, b.pass, b.leave, b.walk, b.diff, b.before]),
    group("gt-out", [b.text, b.svg, b.png, b.present]),
  );
  return { el, b, slider, list };
}

function fillStepList(list, steps, kinds) {
  list.textContent = "";
  steps.forEach((s, i) => {
    const mark = kinds[i].size ? ` [${Array.from(kinds[i]).join(", ")}]` : "";
    const opt = h("option", null, `step ${stepNumber(s)} · line ${s.lineno}: ${s.code}${mark}`);
    opt.value = String(i);
    list.appendChild(opt);
  });
}

function zoomBar(act) {
  const el = h("div", "gt-group gt-zoombar");
  el.setAttribute("aria-label", "zoom");
  el.append(
    button("−", "zoom out (-)", () => act.zoom(-1)),
    button("fit", "fit the picture to the space (0)", () => act.zoom(0)),
    button("+", "zoom in (+)", () => act.zoom(1)),
  );
  const level = h("span", "gt-zoomlevel", "100%");
  el.appendChild(level);
  return { el, level };
}

// ------------------------------------------------------------------ the step's views (pure: film in, words out)

// The reverse pass walked up to sub-step `sub`: classes for the nodes, the arithmetic, the lines to mark.
function flowView(step, sub, lines) {
  const flow = flowOf(step);
  const more = new Map();
  if (sub < 0 || !flow.length) return { more, text: null, current: new Set() };
  const j = Math.min(sub, flow.length - 1);
  flow.slice(0, j).forEach((f) => more.set(f.node, "gt-flow-done"));
  more.set(flow[j].node, "gt-flow-now");
  return { more, text: flow[j].text, current: linesOfNode(lines, flow[j].node), j, flow };
}

// Gradients on the edges so far; .grad boxes fill in as the walk reaches them, the others show what they held before.
function drawFlow(picture, film, f, before) {
  if (!f.flow) return;
  const written = new Map();
  f.flow.slice(0, f.j + 1).forEach((sub) => {
    for (const [edge, text] of Object.entries(sub.edges || {})) picture.labelEdge(edge, text);
    for (const [id, text] of Object.entries(sub.grads || {})) written.set(id, text);
  });
  const all = new Set(f.flow.flatMap((sub) => Object.keys(sub.grads || {})));
  for (const id of all) {
    if (written.has(id)) {
      const text = String(written.get(id));
      picture.setRow(id, gradRow, /^grad /.test(text) ? text : `grad ${text}`, "gt-row-grad gt-row-now");
    } else if (before && before.texts[id] !== undefined) {
      const row = film.rows[before.texts[id]].find((r) => r[1] === "grad" || /^grad /.test(r[0]));
      if (row) picture.setRow(id, gradRow, row[0], row[1] ? `gt-row-${row[1]}` : "");
    }
  }
}

export function diffClasses(d) {
  const more = new Map();
  for (const id of d.freed) more.set(id, "gt-diff-freed");
  for (const id of Object.keys(d.grad)) more.set(id, "gt-diff-grad");
  for (const id of d.kept) more.set(id, `${more.get(id) || ""} gt-diff-kept`.trim());
  return more;
}

function drawDiff(picture, d) {
  for (const id of d.freed) {
    const item = picture.items.get(id);
    if (item && item.base === "node") picture.tagBox(id, "✕ saved values freed", "gt-tag-freed");
  }
  for (const [id, text] of Object.entries(d.grad)) picture.tagBox(id, `.grad ${text}`, "gt-tag-grad");
  for (const id of d.kept) picture.tagBox(id, "◆ kept by retain_grad()", "gt-tag-kept");
}

export function diffWords(film, d, before) {
  const bare = (ids) => ids.map((id) => id.replace(/^gt-/, "")).join(", ");
  const words = [];
  const freed = d.freed.filter((id) => (film.elements[id] || {}).group !== "edge");
  if (freed.length) words.push(`freed the saved values of ${bare(freed)}`);
  for (const [id, text] of Object.entries(d.grad)) words.push(`.grad of ${id.replace(/^gt-/, "")}: ${text}`);
  if (d.kept.length) words.push(`retain_grad() kept .grad on ${bare(d.kept)}`);
  const head = before ? "BEFORE backward() — showing the state it will change. " : "What backward() changed: ";
  return head + words.join("; ");
}

// The objects the step's error involves (steps[i].culprits: dom ids, bare ids or {id}).
export function culpritClasses(step, more) {
  for (const c of step.culprits || []) {
    const id = typeof c === "string" ? (c.startsWith("gt-") ? c : `gt-${c}`) : c && c.id ? `gt-${c.id}` : null;
    if (id) more.set(id, `${more.get(id) || ""} gt-m-culprit`.trim());
  }
}

// One current prediction, and how the program stopped (once: not when an event already says it).
export function warningsOf(film, step, last) {
  const out = [];
  if ("prediction" in step) {
    if (step.prediction) out.push(step.prediction);
  } else if (step.predictions.length) {
    out.push(step.predictions[step.predictions.length - 1]);
  }
  if (last && film.steps_unrecorded) out.push(`${film.steps_unrecorded} more steps ran but were not recorded`);
  return out;
}

// Position of the step that raised (film version 2 says; version 1: the last step).
export function errorStep(film) {
  if (!film.error) return -1;
  return Number.isInteger(film.error_step) ? film.error_step : (film.steps || []).length - 1;
}

// The error, once: its sentence (unless the explanation already quotes PyTorch's message) and the plain words.
export function errorWords(film, step) {
  const message = film.error.replace(/^[^:]*: /, "").split("\n")[0];
  const quoted = step.explanation && message && step.explanation.includes(message);
  return [quoted ? null : `stopped: ${film.error}`, step.explanation || null].filter(Boolean).join("\n\n");
}

// The last node of the reverse pass (where the paths meet and .grad is written).
export function finalLines(lines) {
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /^ {2}(\S+) /.exec(lines[i]);
    if (m) return linesOfNode(lines, m[1]);
  }
  return new Set([lines.length - 1]);
}

// ------------------------------------------------------------------ more panels

// The picture's text twin: hidden for the eye (shown by "text"), always there for screen readers.
function twinPanel() {
  const el = h("div", "gt-twin gt-sr-only");
  el.setAttribute("role", "region");
  el.setAttribute("aria-label", "picture as text");
  return {
    el,
    show(film, frame, index) {
      const words = pictureText(film, frame);
      el.textContent = "";
      const names = h("ul");
      fillList(names, words.names.length ? words.names : ["(none)"]);
      const boxes = h("ul");
      fillList(boxes, words.boxes.length ? words.boxes : ["(none)"]);
      el.append(h("h4", null, `picture of step ${index + 1}: names`), names, h("h4", null, "objects and backward nodes"),
        boxes);
    },
    toggle(on) {
      el.classList.toggle("gt-sr-only", !on);
    },
  };
}

// Keyboard access to the boxes: one button per visible box (shown when focused), opening its details.
function pickPanel(film, onPick) {
  const el = h("div", "gt-pick");
  el.setAttribute("role", "group");
  el.setAttribute("aria-label", "objects in the picture: press one for its details");
  return {
    el,
    show(frame, picture) {
      el.textContent = "";
      for (const id of frame.visible) {
        const info = film.elements[id];
        const item = picture.items.get(id);
        if (!info || info.group === "edge" || !item) continue;
        const ref = frame.texts[id];
        const head = ref === undefined ? info.label : film.rows[ref][0][0];
        const b = button(head, `details of ${head}`, (ev) => {
          ev.stopPropagation();
          onPick(id);
        });
        b.classList.add("gt-pick-btn");
        b.dataset.id = id;
        b.addEventListener("focus", () => item.g.classList.add("gt-focused"));
        b.addEventListener("blur", () => item.g.classList.remove("gt-focused"));
        el.appendChild(b);
      }
    },
  };
}

function headerPanel(film) {
  const el = h("div", "gt-header");
  el.appendChild(h("span", "gt-title", film.title || "gradtrace"));
  const status = h("span", "gt-status");
  status.setAttribute("aria-live", "polite");
  el.appendChild(status);
  return { el, status };
}

// Every element of the stepper, laid out: header, controls, side (code, events, reverse pass), main (picture).
function layout(film, act, onUnpick) {
  const host = h("div", "gt-host");
  const root = h("div", "gt-root");
  root.tabIndex = 0;
  root.setAttribute("role", "region");
  root.setAttribute("aria-roledescription", "stepper");
  root.setAttribute("aria-label", esc(`gradtrace stepper: ${film.title || ""}`));
  host.appendChild(root);
  const v = {
    host, root, header: headerPanel(film), controls: controlsPanel(act), code: codePanel(film.source || ""),
    what: eventsPanel(), reverse: reversePanel(), zoom: zoomBar(act), twin: twinPanel(),
    pick: pickPanel(film, (id) => act.pick(id)), popover: detailsPopover(onUnpick),
    banner: h("div", "gt-banner gt-off"), graph: h("div", "gt-graph"), legend: legendPanel(film),
  };
  v.banner.setAttribute("aria-live", "polite");
  v.graph.setAttribute("role", "group");
  v.graph.setAttribute("aria-label", "picture of this step (its text twin follows; Shift+arrows scroll it)");
  v.graph.tabIndex = 0; // a wide picture scrolls: the keyboard can reach it
  const side = h("div", "gt-side");
  side.append(h("div", "gt-heading", "code"), v.code.el, h("div", "gt-heading", "what this step did"), v.what.el,
    v.reverse.head, v.reverse.el);
  const main = h("div", "gt-main");
  main.append(v.banner, v.graph, v.twin.el, v.pick.el, v.legend.el);
  v.controls.el.appendChild(v.zoom.el);
  const body = h("div", "gt-body");
  body.append(side, main);
  root.append(v.header.el, v.controls.el, body, v.popover.el);
  return v;
}

const PAN = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };

// The keys, for the page, the notebook and presenter mode alike (also in the README).
function keyAction(key, s) {
  const steps = { ArrowRight: 1, ArrowLeft: -1, PageDown: 1, PageUp: -1 };
  if (key in steps) return () => s.show(s.pos + steps[key]);
  const table = {
    ArrowDown: () => s.walk(1) || s.show(s.pos + 1),
    ArrowUp: () => s.walk(-1) || s.show(s.pos - 1),
    Home: () => s.show(0),
    End: () => s.show(Infinity),
    " ": () => s.playPause(),
    Escape: () => s.escape(),
    f: () => s.present(), F: () => s.present(),
    e: () => s.jumpEvent(1), E: () => s.jumpEvent(-1),
    l: () => s.jumpLoop("pass"), L: () => s.jumpLoop("leave"),
    d: () => s.diff(), D: () => s.diff(),
    b: () => s.before(), B: () => s.before(),
    t: () => s.text(), T: () => s.text(),
    "+": () => s.zoom(1), "=": () => s.zoom(1), "-": () => s.zoom(-1), _: () => s.zoom(-1), 0: () => s.zoom(0),
  };
  return table[key] || null;
}

// ------------------------------------------------------------------ zoom, presenter mode, play, save

// The least zoom a picture is shrunk to by default: its 12 px text (Graphviz's fontsize 12, Courier) is drawn at
// 7.2 px, which a 1024x768 projector still shows as readable letters and digits; below it the picture keeps
// this zoom and scrolls. The fit button (0) and presenter mode go further.
export const AUTO_FLOOR = 0.6;

// Zoom and presenter mode of one stepper (`picture()` is the picture shown, `redraw()` draws the step again).
// The zoom has a mode: "auto" (the default: a picture wider or taller than its box is shrunk to fit it, never
// below AUTO_FLOOR nor above 100%), "fit" (the fit button or 0: fitted, 25% to 400%) and "user" (+ and -: as
// set). "auto" and "fit" fit again when the picture (a sheet) or the box changes; "user" stays as set.
// Presenter mode fits on entering and gives back the mode and zoom of before when left.
function viewControl(v, picture, redraw) {
  const { root, graph } = v;
  const doc = root.ownerDocument;
  const win = doc.defaultView;
  const s = { zoom: 1, present: false, mode: "auto", before: null, refits: 0 };
  let changing = 0; // presenter mode entered or left, the screen not changed yet
  const queued = []; // zoom keys pressed meanwhile
  const said = { auto: "fitted to the space, no smaller than " + Math.round(AUTO_FLOOR * 100) + "% (+ or - to choose)",
    fit: "fitted to the space (0)", user: "as chosen with + and - (0 fits)" };

  function apply() {
    picture().zoom(s.zoom);
    v.zoom.level.textContent = `${Math.round(s.zoom * 100)}%`;
    v.zoom.level.title = `zoom ${Math.round(s.zoom * 100)}%: ${s.present ? "presenter mode" : said[s.mode]}`;
    v.zoom.level.dataset.mode = s.present ? "present" : s.mode;
  }

  // The space the picture may take: the box's width and the height it may grow to (its max-height; in presenter
  // mode the height it is given), so that the answer depends neither on the picture's zoom nor on scroll bars.
  function room() {
    const cs = win.getComputedStyle(graph);
    const px = (name) => parseFloat(cs.getPropertyValue(name)) || 0;
    const max = parseFloat(cs.maxHeight);
    const width = graph.offsetWidth - px("border-left-width") - px("border-right-width");
    const height = Number.isFinite(max) ? max - px("border-top-width") - px("border-bottom-width") : graph.clientHeight;
    return [width, height];
  }

  // The zoom that shows the whole picture in its box, between atLeast and atMost; null when the box is not laid out.
  function fit(atLeast, atMost = 4) {
    const [w, hh] = picture().size;
    const [width, height] = room();
    if (!w || !hh || width <= 16 || height <= 16) return null;
    const z = Math.floor(Math.min((width - 16) / w, (height - 16) / hh) * 100) / 100; // the read-out is exact
    return Math.min(atMost, Math.max(atLeast, z));
  }

  // Fit again in the "auto" and "fit" modes; true when the zoom changed.
  function refit() {
    if (s.present || s.before || s.mode === "user") return false; // (s.before: presenter mode being left)
    const z = s.mode === "fit" ? fit(0.25) : fit(AUTO_FLOOR, 1);
    if (z === null || z === s.zoom) return false;
    s.zoom = z;
    s.refits += 1;
    apply();
    return true;
  }

  function zoomBy(d) {
    if (changing) { // the screen is changing (presenter mode entered or left): the key counts once it has
      queued.push(d);
      return;
    }
    if (d === 0) {
      s.mode = "fit";
      s.zoom = fit(0.25) || 1;
    } else {
      s.mode = "user";
      s.zoom = Math.min(4, Math.max(0.25, Math.round(s.zoom * (d > 0 ? 1.25 : 0.8) * 100) / 100));
    }
    apply();
    redraw();
  }

  // Full screen with large type; where full screen is refused (no user gesture, an iframe) the page-filling view stays.
  function present(force) {
    const was = s.present;
    s.present = force === undefined ? !s.present : force;
    if (s.present && !was) s.before = { mode: s.mode, zoom: s.zoom };
    root.classList.toggle("gt-present", s.present);
    // fitted once the screen has changed: measured while full screen is still being left, the box is the whole
    // screen's and an "auto" zoom came back too large for a moment. A zoom key pressed meanwhile (f then + at
    // once) counts after that, as if pressed a moment later: done before, the fit or the zoom given back
    // replaced it
    changing += 1;
    const settle = () => requestAnimationFrame(() => {
      changing -= 1;
      if (s.present) s.zoom = fit(1) || 1;
      else if (s.before) {
        s.mode = s.before.mode;
        s.zoom = s.before.zoom;
        s.before = null;
      }
      apply();
      redraw(); // which fits again, in the "auto" and "fit" modes, for the box left
      if (!changing) for (const d of queued.splice(0)) zoomBy(d);
    });
    if (s.present && root.requestFullscreen && doc.fullscreenElement !== root) {
      root.requestFullscreen().catch(() => {}).then(() => {
        // left again before the screen changed (f f at once): full screen came all the same; leave it
        const left = !s.present && doc.fullscreenElement === root && doc.exitFullscreen;
        return left ? doc.exitFullscreen().catch(() => {}) : undefined;
      }).then(settle);
    } else if (!s.present && doc.fullscreenElement === root && doc.exitFullscreen) {
      doc.exitFullscreen().catch(() => {}).then(settle);
    } else settle();
    root.focus({ preventScroll: true });
  }

  const onFullscreen = () => {
    if (s.present && !doc.fullscreenElement) present(false);
  };
  doc.addEventListener("fullscreenchange", onFullscreen);
  // a window or a notebook column resized (or the box shown again after the text view): fit again, once a frame
  let pending = false;
  const onResize = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      if (root.isConnected && refit()) redraw();
    });
  };
  win.addEventListener("resize", onResize);
  const observer = typeof win.ResizeObserver === "function" ? new win.ResizeObserver(onResize) : null;
  if (observer) observer.observe(graph);
  return {
    apply, zoomBy, present, refit,
    get presenting() {
      return s.present;
    },
    get refits() {
      return s.refits;
    },
    destroy() {
      if (s.present) present(false);
      doc.removeEventListener("fullscreenchange", onFullscreen);
      win.removeEventListener("resize", onResize);
      if (observer) observer.disconnect();
    },
  };
}

// Play: one step every interval() ms up to the last step, then stop.
function player(btn, pos, n, show, interval) {
  let timer = null;
  function pause() {
    if (timer) clearInterval(timer);
    timer = null;
    btn.textContent = "play";
  }
  function start() {
    if (pos() >= n - 1) show(0);
    btn.textContent = "pause";
    timer = setInterval(() => (pos() >= n - 1 ? pause() : show(pos() + 1)), interval());
  }
  return {
    start, pause,
    toggle: () => (timer ? pause() : start()),
  };
}

// "Save this step": the picture as shown, as an SVG or a PNG file, made in the browser.
function saveStep(film, step, picture, root, kind) {
  if (!picture.svg) return;
  const doc = root.ownerDocument;
  const bg = getComputedStyle(root).getPropertyValue("--gt-bg").trim() || "#ffffff";
  const text = `<?xml version="1.0" encoding="UTF-8"?>\n${pictureSvg(picture, bg)}`;
  const name = fileStem(film, step);
  if (kind === "svg") download(doc, svgDataUrl(text), `${name}.svg`);
  else savePng(doc, text, picture.size, `${name}.png`, 2);
}

// ------------------------------------------------------------------ unfolding a folded box

// A big graph's film draws modules and repeated runs as single "folded" boxes (class gt-m-folded).
// Each step maps such a box's element id to a view (film.views[k]: a sheet, a frame and details):
// that step's picture with this one box unfolded, everything else folded as before, laid out ahead
// of time (render/film.py). A view maps the folded groups inside the unfolded one to deeper views
// the same way (its own `unfold`). Click or Enter opens a group, one level deeper each time; "fold
// again" or Esc goes back one level; the breadcrumb goes back to any level. The next steps keep the
// groups open as deep as they have views of the same groups (their own ids, e.g. "mod:model.layer1.0").
// A group with no view in the page: a widget asks its kernel to lay it out (`ask`); a page says how
// to see it.
function unfolder(film, steps, onChange, ask) {
  const views = Array.isArray(film.views) ? film.views : [];
  // whether a kernel answers (a widget's `ask` says: "live", "unknown" until it is heard, "gone"); a page has none
  const kernel = () => (!ask ? "gone" : typeof ask.state === "function" ? ask.state() : "live");
  let path = []; // the open groups' own ids, outermost first
  let levels = []; // what is drawn for them at the shown step: [{view, dom, title}]
  let note = null; // [step, words]: a folded box that has no view at this step
  let busy = null; // [step, words] while the kernel lays a view out
  let reveal = null; // the element to scroll into view once drawn: the unfolded frame, or the box folded again
  const asked = new Map(); // views the kernel laid out: "step\npath" -> view
  const el = h("div", "gt-unfold gt-off");
  el.setAttribute("aria-live", "polite");
  const words = h("span", "gt-unfold-words");
  const crumbs = h("nav", "gt-crumbs gt-off");
  crumbs.setAttribute("aria-label", "unfolded groups: where you are");
  const back = button("fold again", "fold this group again (Esc)", () => close());
  el.append(words, crumbs, back);

  const folded = (frame, dom) => /\bgt-m-folded\b/.test((frame && frame.classes[dom]) || "");
  const shortName = (label) => String(label).replace(/ \([^()]*\)$/, "");
  const key = (i, ids) => `${i}\n${ids.join("\n")}`;
  function blockOf(details, dom) {
    const d = details && details[dom] !== undefined ? film.details[details[dom]] : null;
    return d && d.type === "block" ? d : null;
  }
  // The folded box of group `id` (and `title`, when given) among `details`: its element id, or null.
  function boxOf(details, id, title) {
    for (const dom of Object.keys(details || {})) {
      const b = blockOf(details, dom);
      if (b && b.id === id && (title === undefined || b.title === title)) return dom;
    }
    return null;
  }
  // The picture at depth d of the chain `got` (0: the step's own): what opens from it, and its details.
  function level(i, got, d) {
    if (d === 0) return { opens: steps[i].unfold || {}, details: steps[i].details, path: [] };
    const v = got[d - 1].view;
    return { opens: v.unfold || {}, details: v.details, path: path.slice(0, d) };
  }
  // The views of the groups `ids`, opened one inside the other at step i, as deep as the step has them.
  function chain(i, ids) {
    const got = [];
    if (!steps[i]) return got;
    for (const id of ids) {
      const at = level(i, got, got.length);
      const dom = boxOf(at.details, id);
      if (dom === null) break;
      const k = (at.opens || {})[dom];
      const view = k !== undefined && views[k] ? views[k] : asked.get(key(i, [...ids.slice(0, got.length), id]));
      if (!view) break;
      got.push({ view, dom, title: view.label });
    }
    return got;
  }
  function close(all) {
    if (!path.length && note === null && busy === null) return false;
    if (busy !== null) { // Esc first stops waiting for the kernel (a view it sends later is kept for later)
      busy = null;
      note = null;
      el.removeAttribute("aria-busy");
      onChange();
      return true;
    }
    if (levels.length) reveal = levels[all ? 0 : levels.length - 1].dom;
    path = all ? [] : path.slice(0, Math.max(levels.length - 1, 0));
    note = null;
    onChange();
    return true;
  }
  function opened(ids) {
    path = ids;
    note = null;
    busy = null;
    reveal = "gt-unfolded";
    onChange();
    back.focus({ preventScroll: true });
  }
  // The kernel lays out group `ids` at step i: "laying out…" until it answers, then the view (or why not).
  function request(i, ids, title) {
    const mine = [i, `Laying out ${title}… (the kernel draws it)`];
    busy = mine;
    el.setAttribute("aria-busy", "true");
    onChange();
    ask({ kind: "unfold", step: i, path: ids }).then((got) => {
      const where = got && got.view && Array.isArray(got.path) && got.path.length ? got.path : ids;
      if (got && got.view && !asked.has(key(i, where))) asked.set(key(i, where), adopt(film, got)); // kept for later
      if (busy !== mine) return; // the learner moved on, folded it again or asked for another group
      el.removeAttribute("aria-busy");
      busy = null;
      if (got && got.view) {
        opened(where);
      } else {
        note = [i, `${title}: ${(got && got.error) || "the kernel did not lay it out."}`];
        onChange();
      }
    });
  }
  return {
    el,
    close,
    get open() {
      return path.length > 0;
    },
    // The view to draw at step i instead of the folded picture (null: folded); a step without the
    // deeper views shows the deepest it has.
    view(i) {
      levels = path.length ? chain(i, path) : [];
      path = path.slice(0, levels.length);
      return levels.length ? levels[levels.length - 1].view : null;
    },
    // A click (or Enter) on `dom` at step i, in `frame` (of the view `shown`, or folded): true when it unfolded
    // (or is being laid out).
    pick(i, dom, frame, shown) {
      if (!folded(frame, dom)) return false;
      const block = blockOf(shown ? shown.details : steps[i].details, dom);
      if (!block) return false;
      const depth = levels.length;
      // the picture shown, then the ones it opened from: the deepest that opens this group
      for (let d = depth; d >= 0; d--) {
        const at = level(i, levels, d);
        const box = d === depth ? dom : boxOf(at.details, block.id, block.title);
        if (box === null) continue;
        const ids = [...path.slice(0, d), block.id];
        const k = (at.opens || {})[box];
        if ((k !== undefined && views[k]) || asked.has(key(i, ids))) {
          opened(ids);
          return true;
        }
      }
      // one of the step's own folded boxes opens from the step's picture; any other from the open groups
      // (the kernel opens it inside the deepest of them that holds it)
      const ids = boxOf(steps[i].details, block.id) !== null ? [block.id] : [...path.slice(0, depth), block.id];
      if (kernel() !== "gone") {
        request(i, ids, block.title);
        return true;
      }
      const target = ids.length > 1 || !block.id.startsWith("mod:") ? `[${ids.map((x) => JSON.stringify(x.replace(/^mod:/, ""))).join(", ")}]`
        : JSON.stringify(block.id.slice(4));
      const how = ask ? "run its cell again in a notebook with a kernel (a click then asks the kernel to lay it out)"
        : 'trace this in a notebook with gradtrace.notebook.settings.widget = "anywidget" (a click then asks the '
          + "kernel to lay it out)";
      // in the learner's words: the step as the stepper numbers it, and where the Trace in the code comes from
      note = [i, `${block.title}: no unfolded picture of it was prepared at this step (the page keeps its size bounded); `
        + `its details are shown instead. To see it unfolded, ${how}, or draw step ${stepNumber(steps[i])} `
        + `(line ${steps[i].lineno}) in Python, with trace the Trace this shows (trace = gradtrace.last_trace() `
        + `right after tracing, or gradtrace.Trace.from_json of its saved JSON): `
        + `gradtrace.render.step_graph(trace[${steps[i].index}], unfold=${target}).`];
      return false;
    },
    // The bar above the picture, a tooltip on each folded box and words on its keyboard button.
    show(i, shown, picture, frame, pickEl) {
      if (note && note[0] !== i) note = null;
      if (busy && busy[0] !== i) {
        busy = null;
        el.removeAttribute("aria-busy");
      }
      let text = "";
      if (busy) text = busy[1];
      else if (note) text = note[1];
      else if (shown) text = `Unfolded: ${shown.label}. Everything else is folded as before.`;
      words.textContent = esc(text);
      el.classList.toggle("gt-off", !text);
      el.classList.toggle("gt-busy", !!busy);
      back.classList.toggle("gt-off", !shown);
      back.title = shown ? `fold ${shortName(shown.label)} again (Esc)` : "fold this group again (Esc)";
      back.setAttribute("aria-label", back.title);
      crumbs.textContent = "";
      crumbs.classList.toggle("gt-off", !shown);
      if (shown) {
        const trail = [{ label: "folded picture", depth: 0 }, ...levels.map((l, d) => ({ label: shortName(l.title), depth: d + 1 }))];
        trail.forEach((c, j) => {
          if (j) crumbs.append(h("span", "gt-crumb-sep", "›"));
          if (c.depth === levels.length) {
            const here = h("span", "gt-crumb gt-crumb-here", esc(c.label));
            here.setAttribute("aria-current", "location");
            crumbs.append(here);
          } else {
            crumbs.append(button(esc(c.label), c.depth ? `back to ${esc(c.label)} unfolded` : "back to the folded picture",
              () => {
                if (levels.length) reveal = levels[c.depth].dom;
                path = path.slice(0, c.depth);
                note = null;
                onChange();
              }));
          }
        });
      }
      const opens = new Set();
      const inView = shown ? level(i, levels, levels.length) : null;
      for (const [id, item] of picture.items) {
        if (!folded(frame, id)) continue;
        const tip = item.g.querySelector("title") || item.g.insertBefore(svgEl("title"), item.g.firstChild);
        let has = false;
        if (!shown) has = (steps[i].unfold || {})[id] !== undefined;
        else {
          const block = blockOf(shown.details, id);
          has = !!block && ((inView.opens || {})[id] !== undefined
            || levels.some((_, d) => {
              const at = level(i, levels, d);
              const box = boxOf(at.details, block.id, block.title);
              return box !== null && (at.opens || {})[box] !== undefined;
            }));
        }
        // the kernel is offered only once it has answered: a widget drawn from saved state (an export, a
        // notebook reopened) has none
        const live = kernel() === "live";
        if (has || live) opens.add(id);
        tip.textContent = has ? "folded: click (or Enter) to unfold"
          : live ? "folded: click (or Enter) to have the kernel unfold it" : "folded (no unfolded picture at this step)";
      }
      const target = reveal && picture.svg ? picture.svg.querySelector(`g[id="${CSS.escape(reveal)}"]`) : null;
      reveal = null;
      const box = picture.el.parentElement;
      if (target && box) { // scroll the picture (not the page) to what just opened or closed
        const r = target.getBoundingClientRect();
        const q = box.getBoundingClientRect();
        box.scrollLeft += r.left - q.left - Math.max(8, (q.width - r.width) / 2);
        box.scrollTop += r.top - q.top - Math.max(8, (q.height - r.height) / 2);
      }
      for (const b of pickEl.querySelectorAll("button[data-id]")) {
        if (!opens.has(b.dataset.id)) continue;
        const label = `unfold ${b.textContent}`;
        b.title = label;
        b.setAttribute("aria-label", label);
      }
    },
  };
}

// A view the kernel laid out (render/views.py unfolded_view): its own rows, frames, details and sheet,
// added to the film's tables with its references moved to where they land. Returns the view.
export function adopt(film, got) {
  const rows0 = film.rows.length;
  const details0 = film.details.length;
  film.rows.push(...got.rows);
  film.details.push(...got.details);
  const frame = got.frame;
  const texts = {};
  for (const [id, r] of Object.entries(frame.texts || {})) texts[id] = r + rows0;
  film.frames.push({ visible: frame.visible, classes: frame.classes, texts });
  Object.assign(film.elements, got.elements || {});
  if (!Array.isArray(film.sheets) || !film.sheets.length) film.sheets = [film.svg];
  film.sheets.push(got.sheet);
  const details = {};
  for (const [id, d] of Object.entries(got.view.details || {})) details[id] = d + details0;
  return { sheet: film.sheets.length - 1, frame: film.frames.length - 1, label: got.view.label, details, unfold: {} };
}

// ------------------------------------------------------------------ the stepper

export function mount(el, film, options = {}) {
  const steps = film.steps || [];
  const n = steps.length;
  const kinds = eventKinds(film);
  const pairs = film.backward || [];
  const state = { pos: 0, selected: null, diff: false, before: false, sub: -1, text: false, view: null, frame: null };
  const cleanups = [];
  const doc = el.ownerDocument;
  const act = {
    show: (i) => show(i === Infinity ? n - 1 : i),
    step: (d) => show(state.pos + d),
    play: () => play.toggle(),
    event: (d) => jumpEvent(d),
    loop: (which) => jumpLoop(which),
    walk: (d) => walk(d),
    diff: () => toggleDiff(),
    before: () => toggleBefore(),
    text: () => toggleText(),
    save: (kind) => save(kind),
    present: () => view.present(),
    zoom: (d) => view.zoomBy(d),
    pick: (id) => select(id, true),
  };
  el.textContent = "";
  const v = layout(film, act, () => select(null, true));
  const { root, controls, graph } = v;
  const unfold = unfolder(film, steps, () => {
    state.selected = null;
    picture.select(null);
    render();
  }, typeof options.ask === "function" ? options.ask : null);
  if (typeof options.ask === "function" && typeof options.ask.onState === "function") {
    // tooltips say what a click does once the kernel is heard; data-kernel says whether one answers
    // ("unknown" until it is heard or the wait for it ends, then "live" or "gone")
    root.dataset.kernel = typeof options.ask.state === "function" ? options.ask.state() : "live";
    cleanups.push(options.ask.onState((now) => {
      root.dataset.kernel = now;
      render();
    }));
  }
  graph.parentNode.insertBefore(unfold.el, graph);
  el.appendChild(v.host);
  controls.slider.max = String(Math.max(n - 1, 0));
  fillStepList(controls.list, steps, kinds);

  // a big (folded) trace comes in sheets, one layout for each run of steps
  if (!Array.isArray(film.sheets) || !film.sheets.length) film.sheets = [film.svg];
  const sheets = film.sheets; // views the kernel lays out later are added to it
  const sheetPictures = new Map();
  function sheetPicture(k) {
    if (!sheetPictures.has(k)) sheetPictures.set(k, makePicture(film, (id, g) => select(id, false, g), sheets[k]));
    return sheetPictures.get(k);
  }
  let picture = sheetPicture(steps.length ? steps[0].sheet || 0 : 0);
  graph.appendChild(picture.el);
  graph.addEventListener("click", () => select(null));

  const frameOf = (i) => film.frames[steps[i].frame];
  const pairAt = (i) => pairs.find((p) => p.step === i) || null;

  // -------------------------------------------------------------- details, opened in place
  let anchor = null;
  function select(id, refocus, g) {
    if (id && unfold.pick(state.pos, id, state.frame, state.view)) return;
    state.selected = id;
    anchor = g || (id && picture.items.get(id) ? picture.items.get(id).g : null);
    picture.select(id);
    render();
    if (id && anchor && refocus !== false) {
      const close = v.popover.el.querySelector(".gt-close");
      if (close) close.focus({ preventScroll: true });
    } else if (!id && refocus) {
      root.focus({ preventScroll: true });
    }
  }

  function renderDetails(step) {
    if (!state.selected || !anchor) {
      v.popover.hide();
      return;
    }
    const ref = (state.view ? state.view.details : step.details)[state.selected];
    v.popover.fill(ref === undefined ? null : film.details[ref], "Not alive at this step.");
    v.popover.place(anchor, view.presenting ? root : graph);
  }

  // -------------------------------------------------------------- drawing one step
  function renderControls(step) {
    const b = controls.b;
    v.header.status.textContent = esc(`step ${stepNumber(step)} of ${stepNumber(steps[n - 1])} · line ${step.lineno}`);
    controls.slider.value = String(state.pos);
    controls.slider.setAttribute("aria-valuetext", `step ${stepNumber(step)} of ${stepNumber(steps[n - 1])}, line ${step.lineno}`);
    controls.list.value = String(state.pos);
    b.prev.disabled = b.first.disabled = state.pos === 0;
    b.next.disabled = b.last.disabled = state.pos === n - 1;
    b.event.disabled = nextEventFrom(state.pos, 1) === null;
    const loop = loopJumps(steps, state.pos, film.source);
    b.pass.disabled = loop.pass === null;
    b.leave.disabled = loop.leave === null;
    b.walk.disabled = !flowOf(step).length;
    b.diff.disabled = !pairs.length;
    b.before.disabled = !state.diff;
    const pressed = { walk: state.sub >= 0, diff: state.diff, before: state.before, text: state.text,
      present: view.presenting };
    for (const [k, on] of Object.entries(pressed)) b[k].setAttribute("aria-pressed", on ? "true" : "false");
  }

  function renderPicture(step, shownIndex, pair) {
    state.view = !pair && state.sub < 0 ? unfold.view(shownIndex) : null; // one block unfolded
    const shown = sheetPicture(state.view ? state.view.sheet : steps[shownIndex].sheet || 0);
    if (shown !== picture) {
      graph.replaceChild(shown.el, picture.el);
      picture = shown;
      picture.select(state.selected);
      view.apply();
    }
    const frame = state.view ? film.frames[state.view.frame] : frameOf(shownIndex);
    state.frame = frame;
    const lines = step.reverse || [];
    const f = flowView(step, state.sub, lines);
    const d = pair ? diffOf(film, pair) : null;
    const more = d ? diffClasses(d) : f.more;
    if (!state.view) culpritClasses(step, more);
    picture.apply(frame, more);
    v.legend.show(frame, more);
    if (d) drawDiff(picture, d);
    else drawFlow(picture, film, f, pairAt(state.pos) ? frameOf(pairAt(state.pos).before) : null);
    root.classList.toggle("gt-diffing", !!d);
    root.classList.toggle("gt-walking", state.sub >= 0);
    let words = null;
    if (d) words = diffWords(film, d, state.before);
    else if (f.text) {
      const end = f.j === f.flow.length - 1 ? " (end of the reverse pass)" : "";
      words = `${f.j + 1} / ${f.flow.length}${end}: ${f.text}`;
    }
    v.banner.textContent = words ? esc(words) : "";
    v.banner.classList.toggle("gt-off", !words);
    v.reverse.show(lines, f.current.size || !lines.length ? f.current : finalLines(lines));
    v.twin.show(film, frame, steps[shownIndex].index);
    v.pick.show(frame, picture);
    unfold.show(shownIndex, state.view, picture, frame, v.pick.el);
  }

  function render() {
    if (!n) {
      v.header.status.textContent = "no statement ran: the code has nothing to step through";
      return;
    }
    const step = steps[state.pos];
    const pair = state.diff ? pairAt(state.pos) : null;
    root.dataset.step = String(state.pos);
    root.dataset.sub = String(state.sub);
    renderControls(step);
    v.code.show(step.lineno);
    renderPicture(step, pair && state.before ? pair.before : state.pos, pair);
    const failed = state.pos === errorStep(film);
    // the error is said once, in the explanation box (a version 1 film also lists it among the events)
    const events = failed ? step.events.filter((e) => !e.includes(film.error)) : step.events;
    v.what.show({ events, explanation: failed ? errorWords(film, step) : step.explanation || null,
      warnings: warningsOf(film, step, state.pos === n - 1) });
    view.refit(); // by default a picture wider than its box is shrunk to fit (see viewControl)
    renderDetails(step);
    reveal();
  }

  // A picture wider (or taller) than its box scrolls to what the step is about (what it made, moved,
  // changed, the node the reverse pass is at, what backward() changed), once per step, walk or view. Once the
  // zoom was fitted again (on opening, a new sheet, a resize) a step that marks nothing shows the top left of
  // what the picture shows.
  let revealed = null;
  let placed = 0;
  function reveal() {
    const key = `${state.pos}:${state.sub}:${state.diff}:${state.before}:${view.presenting}:${view.refits}`;
    if (key === revealed || !picture.svg) return;
    revealed = key;
    const refitted = view.refits !== placed;
    placed = view.refits;
    const about = state.sub >= 0 ? FOCUS.walk : state.diff ? FOCUS.diff : FOCUS.step;
    const shown = (g) => !g.classList.contains("gt-hidden");
    let focus = Array.from(picture.svg.querySelectorAll(about)).filter(shown);
    const sub = state.sub >= 0 ? flowOf(steps[state.pos])[state.sub] : null;
    for (const id of Object.keys((sub && sub.grads) || {})) { // the .grad this node of the reverse pass fills in
      const item = picture.items.get(id);
      if (item && !item.g.classList.contains("gt-hidden")) focus.push(item.g);
    }
    const start = !focus.length && refitted;
    if (start) focus = Array.from(picture.svg.querySelectorAll("g.node")).filter(shown);
    const box = graph.getBoundingClientRect();
    if (!focus.length || !box.width) return;
    const rects = focus.map((g) => g.getBoundingClientRect());
    const want = { left: Math.min(...rects.map((r) => r.left)), right: Math.max(...rects.map((r) => r.right)),
      top: Math.min(...rects.map((r) => r.top)), bottom: Math.max(...rects.map((r) => r.bottom)) };
    const inner = { left: box.left + 4, right: box.left + graph.clientWidth - 4, top: box.top + 4,
      bottom: box.top + graph.clientHeight - 4 };
    // the least scroll that shows all of it; when it is wider than the box, its middle in the box's middle
    // (what the picture shows, with nothing marked: its top left)
    const shift = (lo, hi, from, to) =>
      hi - lo > to - from ? (start ? lo - from : (lo + hi) / 2 - (from + to) / 2)
        : lo < from ? lo - from : hi > to ? hi - to : 0;
    const dx = shift(want.left, want.right, inner.left, inner.right);
    const dy = shift(want.top, want.bottom, inner.top, inner.bottom);
    if (dx || dy) graph.scrollBy({ left: dx, top: dy, behavior: "instant" });
  }

  // -------------------------------------------------------------- moving
  function show(i) {
    if (!n) {
      render(); // the status line says why there is nothing to step through
      return;
    }
    const pos = Math.min(Math.max(0, i), n - 1);
    if (pos !== state.pos) state.sub = -1;
    state.pos = pos;
    if (state.diff && !pairAt(pos)) state.diff = false;
    render();
    if (typeof options.onStep === "function") options.onStep(state.pos);
  }

  function nextEventFrom(pos, d) {
    for (let j = pos + d; j >= 0 && j < n; j += d) if (kinds[j].size) return j;
    return null;
  }

  function jumpEvent(d) {
    const j = nextEventFrom(state.pos, d);
    if (j !== null) show(j);
  }

  function jumpLoop(which) {
    const j = n ? loopJumps(steps, state.pos, film.source)[which] : null;
    if (j !== null) show(j);
  }

  // ↓ walks the reverse pass from its first node and stays at its last; ↑ walks back, from the last node when no
  // walk is on, and leaves the walk from the first (as Escape does).
  function walk(d) {
    const flow = flowOf(steps[state.pos] || {});
    if (!flow.length) return false;
    const s = state.sub < 0 && d < 0 ? flow.length - 1 : state.sub + d;
    state.sub = Math.max(-1, Math.min(s, flow.length - 1));
    state.diff = false;
    render();
    return true;
  }

  function toggleDiff() {
    state.diff = !state.diff;
    state.before = false;
    state.sub = -1;
    if (state.diff && !pairAt(state.pos)) {
      const pair = pairs.find((p) => p.step >= state.pos) || pairs[pairs.length - 1];
      state.diff = false;
      if (pair) {
        show(pair.step);
        state.diff = true;
      }
    }
    render();
  }

  function toggleBefore() {
    if (!state.diff) return;
    state.before = !state.before;
    render();
  }

  function toggleText() {
    state.text = !state.text;
    v.twin.toggle(state.text);
    graph.classList.toggle("gt-off", state.text);
    render();
  }

  // -------------------------------------------------------------- zoom, presenter mode, play, save
  const view = viewControl(v, () => picture, render);
  cleanups.push(view.destroy);
  const play = player(controls.b.play, () => state.pos, n, show, () => options.interval || 900);
  const save = (kind) => n && saveStep(film, steps[state.pos], picture, root, kind);

  // Escape closes what is open, innermost first; false when nothing was.
  function escape() {
    if (v.popover.open) select(null, true);
    else if (unfold.close()) root.focus({ preventScroll: true });
    else if (view.presenting) view.present(false);
    else if (state.diff) toggleDiff();
    else if (state.sub >= 0) walk(-state.sub - 1);
    else return false;
    return true;
  }

  // -------------------------------------------------------------- keys
  const keyState = {
    get pos() {
      return state.pos;
    },
    show: (i) => act.show(i), walk, playPause: () => play.toggle(), escape, present: () => view.present(), jumpEvent,
    jumpLoop, diff: toggleDiff, before: toggleBefore, text: toggleText, zoom: (d) => view.zoomBy(d),
  };
  function onKey(ev) {
    if (ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const target = ev.target;
    const tag = target && target.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT" || (tag === "INPUT" && target !== controls.slider)) return;
    if ((target && target.isContentEditable) || (ev.key === " " && tag === "BUTTON")) return;
    const pan = ev.shiftKey ? PAN[ev.key] : null; // Shift+arrows scroll a picture wider or taller than its box
    const run = pan ? () => graph.scrollBy({ left: pan[0] * 80, top: pan[1] * 80 }) : keyAction(ev.key, keyState);
    if (!run || run() === false) return;
    ev.preventDefault();
    ev.stopPropagation();
  }

  const keyTarget = options.globalKeys ? doc : root;
  keyTarget.addEventListener("keydown", onKey);
  cleanups.push(() => keyTarget.removeEventListener("keydown", onKey));
  if (options.host === "notebook") cleanups.push(keepKeys(v.host, root));

  show(Number.isInteger(options.step) ? options.step : firstChange(film));

  return {
    show,
    next: () => show(state.pos + 1),
    prev: () => show(state.pos - 1),
    play: () => play.start(),
    pause: () => play.pause(),
    get step() {
      return state.pos;
    },
    destroy() {
      play.pause();
      for (const f of cleanups) f();
      el.textContent = "";
    },
  };
}

// ------------------------------------------------------------------ hosts

// In JupyterLab the notebook reads keys for its own commands, and a click anywhere in the stepper (not on a
// control) gives it the keyboard. While it has the keyboard no key goes on to JupyterLab, whether the stepper uses
// it or not: the notebook's single-key commands (M makes the traced cell Markdown, X cuts it, A inserts a cell,
// Enter edits) and its chords (Ctrl+Backspace merges, Alt+Enter inserts) match the element that has the focus,
// which data-lm-suppress-shortcuts on an element around it does not stop. What the browser does with a key (Tab
// moves the focus, text is typed into a box) is left alone.
function keepKeys(wrap, root) {
  wrap.setAttribute("data-lm-suppress-shortcuts", "true");
  const onDown = (ev) => {
    const tag = ev.target && ev.target.tagName;
    if (tag !== "INPUT" && tag !== "BUTTON" && tag !== "SELECT") setTimeout(() => root.focus({ preventScroll: true }), 0);
  };
  const keep = (ev) => ev.stopPropagation();
  wrap.addEventListener("mousedown", onDown);
  for (const type of ["keydown", "keypress", "keyup"]) wrap.addEventListener(type, keep);
  return () => {
    wrap.removeEventListener("mousedown", onDown);
    for (const type of ["keydown", "keypress", "keyup"]) wrap.removeEventListener(type, keep);
  };
}

function sendStep(model, i) {
  if (model.get("step") === i) return;
  try {
    model.set("step", i);
    model.save_changes();
  } catch (err) {
    // no kernel behind this view (a saved notebook): stepping goes on without telling anyone
  }
}

// How long a widget waits for its kernel to lay out an unfolded view before saying that none answered.
const ASK_MS = 20000;
const NO_KERNEL = "no kernel answered (the notebook's kernel is gone, restarted or busy): run this cell again, "
  + "then click the group again.";

// How long a widget waits, when drawn, to hear that its kernel answers at all.
const HELLO_MS = 5000;

// Questions to the widget's kernel ({kind: "unfold", ...}, see notebook/widget.py), each answered once by
// a message with the same id; a promise of the answer, or of {error} when no kernel answers in time.
// `ask.state()` says whether a kernel answers: "unknown" until one is heard, then "live"; "gone" when a
// question went unanswered or could not be sent (a widget drawn from saved state: an export, a reopened
// notebook). `ask.onState(f)` calls f when that changes (and returns how to stop).
function asker(model) {
  let next = 0;
  let state = "unknown";
  const waiting = new Map();
  const listeners = new Set();
  const become = (now) => {
    if (state === now) return;
    state = now;
    for (const f of [...listeners]) f(now);
  };
  const onMsg = (msg) => {
    const done = msg && msg.kind === "unfolded" ? waiting.get(msg.id) : null;
    if (done) done(msg);
  };
  model.on("msg:custom", onMsg);
  function ask(content, ms = ASK_MS) {
    const id = `q${++next}`;
    return new Promise((resolve) => {
      const finish = (msg) => {
        clearTimeout(timer);
        waiting.delete(id);
        if (msg && msg.error !== NO_KERNEL) become("live");
        else if (state !== "live") become("gone"); // a kernel heard once may be busy: it stays offered
        resolve(msg);
      };
      const timer = setTimeout(() => finish({ error: NO_KERNEL }), ms);
      waiting.set(id, finish);
      try {
        model.send({ ...content, id });
      } catch (err) {
        finish({ error: NO_KERNEL }); // a widget drawn from saved state has no kernel to ask
      }
    });
  }
  ask.state = () => state;
  ask.onState = (f) => {
    listeners.add(f);
    return () => listeners.delete(f);
  };
  // Lab's widget manager names its kernel (none: the notebook has no kernel); others are asked a question
  // that names no group: any answer, an error included, shows that a kernel listens
  const manager = model.widget_manager;
  if (manager && "kernel" in manager && !manager.kernel) become("gone");
  else ask({ kind: "unfold", step: null, path: null }, HELLO_MS);
  return {
    ask,
    destroy() {
      model.off("msg:custom", onMsg);
      listeners.clear();
      for (const finish of [...waiting.values()]) finish({ error: NO_KERNEL });
    },
  };
}

// anywidget: the widget's model carries the film under "film", the step under "step".
function render({ model, el }) {
  const wrap = document.createElement("div");
  wrap.className = "gt-widget";
  el.appendChild(wrap);
  const kernel = asker(model);
  const options = {
    step: model.get("step") || undefined, // 0, the widget's default, opens at the first step that changes something
    interval: model.get("interval") || 900,
    host: "notebook",
    onStep: (i) => sendStep(model, i),
    ask: kernel.ask,
  };
  let stepper = mount(wrap, model.get("film") || {}, options);
  const onFilm = () => {
    stepper.destroy();
    options.step = undefined;
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
    kernel.destroy();
    stepper.destroy();
  };
}

/** The text of gzip-compressed, base64-encoded bytes (the browser's own DecompressionStream). */
export async function unpackText(b64) {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
}

/** Mount every film of the page: <script type="application/json" data-gt-film="<id of its element>">.
 *  The JSON is the film itself, or (a notebook's output, to keep the saved notebook small) one string:
 *  the film's JSON gzip-compressed and base64-encoded. */
export function boot(doc = document, tries = 0) {
  let waiting = false;
  for (const data of Array.from(doc.querySelectorAll('script[type="application/json"][data-gt-film]'))) {
    if (data.dataset.gtMounted) continue;
    const el = doc.getElementById(data.dataset.gtFilm);
    if (!el) {
      waiting = true;
      continue;
    }
    data.dataset.gtMounted = "1";
    const page = data.dataset.gtHost === "page";
    const options = page ? { globalKeys: true } : { host: "notebook" };
    const film = JSON.parse(data.textContent);
    if (typeof film === "string") unpackText(film).then((text) => mount(el, JSON.parse(text), options));
    else mount(el, film, options);
  }
  // a notebook may run this script before its output is attached to the page
  if ((waiting || tries === 0) && tries < 120) requestAnimationFrame(() => boot(doc, tries + 1));
}

export default { render };

if (typeof document !== "undefined" && typeof requestAnimationFrame === "function") boot(document);
