// The stepper's text helpers: how learner text, values and file names are shown.
import assert from "node:assert/strict";
import { test } from "node:test";

import { stepper } from "./films.mjs";

const { esc, brief, fileStem, svgDataUrl, stepNumber } = stepper;

test("esc shows control and format characters as escapes, keeps newlines, turns a tab into a space", () => {
  assert.equal(esc("safe = x + 1"), "safe = x + 1");
  assert.equal(esc("a\u202eb"), "a\\u202eb"); // a bidi override cannot reorder what follows
  assert.equal(esc("bell\u0007"), "bell\\x07");
  assert.equal(esc("zero\u200bwidth"), "zero\\u200bwidth");
  assert.equal(esc("\u{f0000}"), "\\U000f0000"); // a private-use character beyond the BMP
  assert.equal(esc("one\ntwo\tthree"), "one\ntwo three");
  assert.equal(esc(42), "42");
});

test("brief cuts a long tensor to its first element and never cuts a number", () => {
  assert.equal(brief("[1., 2.]", 20), "[1., 2.]");
  assert.equal(brief("[[-0.16695413, 0.52340012, 0.99], [1.5, 2.5, 3.5]]", 20), "[[-0.16695413, …]]");
  assert.equal(brief("grad [0.25, 0.5, 0.75, 1.0]", 10), "grad [0.25, …]");
  assert.equal(brief("10615031808.123456789", 5), "10615031808.123456789");
});

test("fileStem names a saved picture after the film and the step a person reads", () => {
  assert.equal(fileStem({ title: "my lesson.py" }, { index: 2 }), "my_lesson.py-step3");
  assert.equal(fileStem({ title: "" , filename: "<gradtrace>" }, { index: 0 }), "gradtrace-step1");
  assert.equal(fileStem({ title: "///" }, { index: 9 }), "gradtrace-step10");
  assert.equal(stepNumber({ index: 0 }), 1);
});

test("svgDataUrl carries the SVG text whole", () => {
  const svg = '<svg xmlns="http://www.w3.org/2000/svg"><text>x² & y#1 100%</text></svg>';
  const url = svgDataUrl(svg);
  assert.ok(url.startsWith("data:image/svg+xml;charset=utf-8,"));
  assert.equal(decodeURIComponent(url.slice(url.indexOf(",") + 1)), svg);
});
