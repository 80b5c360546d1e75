// Reading a film as a whole: its pictures in words, the legend's classes, warnings, views a kernel adds, packing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { gzipSync } from "node:zlib";

import { realFilm, stepper } from "./films.mjs";

const { pictureText, usedClasses, warningsOf, adopt, unpackText } = stepper;
const forum = realFilm("forum");
const stale = realFilm("stale");

test("pictureText: each name's arrow and each drawn box, with the marks the step put on it", { skip: stale.skip }, () => {
  const { film } = stale;
  const at = film.steps.findIndex((s) => s.code === "b.add_(1)");
  const step = film.steps[at];
  const { names, boxes } = pictureText(film, film.frames[step.frame]);
  assert.deepEqual(names.sort(), ["a → t1", "b → t3", "c → t4"]); // as the events say: b was rebound to t3
  const drawn = step.events.join("\n").match(/changed in place/g);
  assert.equal(drawn.length, 1);
  assert.equal(boxes.filter((b) => /\[.*\bmutated\b.*\]$/.test(b)).length, 1); // the one object add_ changed
  assert.ok(boxes.some((b) => b.includes("AddBackward0") && /\bcreated\b/.test(b)));
  assert.ok(boxes.every((b) => !b.includes("gt-")));
});

test("usedClasses lists the classes the film's pictures use, and the culprit and freed marks it shows", { skip: forum.skip }, () => {
  const { film } = forum;
  const used = usedClasses(film);
  const has = (cls) => used.some((set) => set.has(cls));
  assert.ok(has("gt-k-leaf") && has("gt-m-culprit") && has("gt-m-freed") && has("gt-e-saved"));
  assert.ok(!has("gt-m-stale")); // nothing here was changed in place
  assert.equal(usedClasses({ ...film, frames: new Array(5001).fill({ classes: {} }) }), null); // too big to read
});

test("warningsOf: the one prediction, and steps that ran but were not recorded", { skip: stale.skip }, () => {
  const { film } = stale;
  const add = film.steps.findIndex((s) => s.code === "b.add_(1)");
  const said = warningsOf(film, film.steps[add], false);
  assert.equal(said.length, 1);
  assert.match(said[0], /^backward\(\) from \w+ will fail: saved value self of n\d+ \(PowBackward0\) was saved at version 0 but t3 is now at version 1$/);
  assert.deepEqual(warningsOf(film, film.steps[0], false), []);
  assert.deepEqual(warningsOf({ ...film, steps_unrecorded: 7 }, film.steps[0], true),
    ["7 more steps ran but were not recorded"]);
  const v1 = { predictions: ["first", "second"] }; // version 1: the last of a list
  assert.deepEqual(warningsOf(film, v1, false), ["second"]);
});

test("adopt moves a view's own rows, details and sheet to where they land in the film", () => {
  const film = { svg: "<svg id='a'/>", rows: [[["r0", ""]]], details: [{ id: "d0" }], frames: [{}], elements: {} };
  const got = {
    rows: [[["v0", "head"]], [["v1", ""]]],
    details: [{ id: "vd0" }],
    frame: { visible: ["gt-u1", "gt-u2"], classes: { "gt-u1": "gt-box" }, texts: { "gt-u1": 0, "gt-u2": 1 } },
    elements: { "gt-u1": { group: "node", label: "u1" } },
    sheet: "<svg id='b'/>",
    view: { label: "model.layer1", details: { "gt-u1": 0 } },
  };
  const view = adopt(film, got);
  assert.deepEqual(view, { sheet: 1, frame: 1, label: "model.layer1", details: { "gt-u1": 1 }, unfold: {} });
  assert.deepEqual(film.sheets, ["<svg id='a'/>", "<svg id='b'/>"]);
  assert.deepEqual(film.frames[1].texts, { "gt-u1": 1, "gt-u2": 2 });
  assert.deepEqual(film.rows[film.frames[1].texts["gt-u2"]], [["v1", ""]]);
  assert.deepEqual(film.details[view.details["gt-u1"]], { id: "vd0" });
  assert.equal(film.elements["gt-u1"].label, "u1");
});

test("unpackText reads what gzip and base64 packed (a notebook's film and stepper travel so)", async () => {
  const text = JSON.stringify({ code: "x² ← y · 3 </script>", n: 5376 });
  const b64 = gzipSync(Buffer.from(text, "utf-8"), { level: 9 }).toString("base64");
  assert.equal(await unpackText(b64), text);
});
