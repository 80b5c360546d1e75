// The reverse pass and what backward() changed, as the stepper reads them off a real film.
import assert from "node:assert/strict";
import { test } from "node:test";

import { realFilm, stepper } from "./films.mjs";

const { linesOfNode, finalLines, flowOf, diffOf, diffClasses, diffWords, culpritClasses, errorStep, errorWords } =
  stepper;
const forum = realFilm("forum");

test("linesOfNode and finalLines pick one node's lines of the reverse pass", { skip: forum.skip }, () => {
  const { film } = forum;
  const lines = film.steps[2].reverse; // the first backward(): f = x**2 + x**3 at 42
  for (const sub of flowOf(film.steps[2])) {
    const id = sub.node.replace(/^gt-/, "");
    const mine = [...linesOfNode(lines, sub.node)].map((i) => lines[i].trim());
    assert.deepEqual(mine, sub.text.split("\n"), id); // the film's own node by node text
  }
  const last = [...finalLines(lines)].map((i) => lines[i]);
  assert.match(last[0], /^ {2}n\d+ AccumulateGrad: gets /);
  assert.match(last.at(-1), /x \(t1\)\.grad = 5376$/); // 2·42 + 3·42², as PyTorch computed it
  assert.deepEqual(flowOf({}), []);
});

test("diffOf read off the frames finds the film's own gradients and freed values", { skip: forum.skip }, () => {
  const { film } = forum;
  assert.equal(film.backward.length, 3);
  for (const pair of film.backward) {
    assert.equal(diffOf(film, pair), pair.diff); // version 2 films say it
    const read = diffOf(film, { ...pair, diff: undefined }); // version 1 films: read off the frames
    assert.deepEqual(read.grad, pair.diff.grad);
    for (const id of pair.diff.freed) assert.ok(read.freed.includes(id), id); // (it also lists values freed before)
    assert.deepEqual(read.kept, pair.diff.kept);
  }
});

test("diffWords and diffClasses say and mark what the second backward() changed", { skip: forum.skip }, () => {
  const { film } = forum;
  const d = film.backward.find((p) => p.diff.freed.length).diff;
  const words = diffWords(film, d, false);
  const nodes = d.freed.filter((id) => film.elements[id].group !== "edge").map((id) => id.slice(3));
  assert.ok(nodes.length === 2 && !words.includes("gt-"), words);
  assert.ok(words.startsWith(`What backward() changed: freed the saved values of ${nodes.join(", ")}; `), words);
  assert.ok(words.endsWith(`.grad of t1: ${d.grad["gt-t1"]}`), words); // 5376 → 10752: the gradients add up
  assert.ok(diffWords(film, d, true).startsWith("BEFORE backward()"));
  const marks = diffClasses(d);
  for (const id of d.freed) assert.equal(marks.get(id), "gt-diff-freed");
  assert.equal(marks.get("gt-t1"), "gt-diff-grad");
});

test("the error: its step, its culprits and its words, said once", { skip: forum.skip }, () => {
  const { film } = forum;
  const at = errorStep(film);
  assert.equal(at, film.error_step);
  const step = film.steps[at];
  const marks = new Map([["gt-t1", "gt-diff-grad"]]);
  culpritClasses(step, marks);
  for (const id of step.culprits) assert.equal(marks.get(id), "gt-m-culprit");
  assert.equal(marks.get("gt-t1"), "gt-diff-grad");
  culpritClasses({ culprits: ["t1", { id: "n9" }] }, marks); // bare ids and {id} name the same elements
  assert.equal(marks.get("gt-t1"), "gt-diff-grad gt-m-culprit");
  assert.equal(marks.get("gt-n9"), "gt-m-culprit");
  assert.equal(errorWords(film, step), step.explanation); // it quotes PyTorch's message: not said twice
  assert.equal(errorWords(film, { ...step, explanation: null }), `stopped: ${film.error}`);
  assert.equal(errorStep({ ...film, error_step: undefined }), film.steps.length - 1); // version 1: the last step
  assert.equal(errorStep({ ...film, error: null }), -1);
});
