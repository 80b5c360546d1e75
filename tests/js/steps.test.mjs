// What a step is: the kinds of event the jump buttons look for, and where a loop's jumps go.
import assert from "node:assert/strict";
import { test } from "node:test";

import { realFilm, stepper } from "./films.mjs";

const { eventKinds, loopJumps, nameTargets } = stepper;
const forum = realFilm("forum");
const stale = realFilm("stale");

test("loopJumps: the next pass of a line and the first step after its loop", () => {
  // a loop body of lines 2-3 run three times, then line 4 (the film's steps, by line number)
  const steps = [1, 2, 3, 2, 3, 2, 3, 4].map((lineno, index) => ({ index, lineno }));
  assert.deepEqual(loopJumps(steps, 1), { pass: 3, leave: 7 });
  assert.deepEqual(loopJumps(steps, 4), { pass: 6, leave: 7 });
  assert.deepEqual(loopJumps(steps, 5), { pass: null, leave: null }); // the last pass: the line does not run again
  assert.deepEqual(loopJumps(steps, 0), { pass: null, leave: null });
  const endless = [1, 2, 1, 2].map((lineno, index) => ({ index, lineno }));
  assert.deepEqual(loopJumps(endless, 0), { pass: 2, leave: null }); // the program ends inside the loop
});

test("eventKinds of a real film: every backward() and the error, read off the frames", { skip: forum.skip }, () => {
  const { film } = forum;
  const kinds = eventKinds(film).map((k) => [...k].sort());
  const backward = film.steps.filter((s) => /^backward\(\)/.test(s.events[0] || "")).map((s) => s.index);
  assert.deepEqual(backward, [2, 3, 4]); // the film's own sentences: three backward() calls
  assert.deepEqual(kinds.map((k, i) => (k.includes("backward") ? i : -1)).filter((i) => i >= 0), backward);
  assert.deepEqual(kinds.map((k, i) => (k.includes("error") ? i : -1)).filter((i) => i >= 0), [film.error_step]);
  assert.deepEqual(kinds[0], []);
});

test("eventKinds tells a rebinding from a change in place", { skip: stale.skip }, () => {
  const { film } = stale;
  const kinds = eventKinds(film);
  const at = (code) => film.steps.findIndex((s) => s.code === code);
  assert.ok(kinds[at("b = b * 1")].has("rebind"));
  assert.ok(!kinds[at("b = b * 1")].has("mutate"));
  assert.ok(kinds[at("b.add_(1)")].has("mutate"));
  assert.ok(!kinds[at("b.add_(1)")].has("rebind"));
  assert.ok(!kinds[at("b = a.exp()")].has("rebind")); // a first binding is not a rebinding
  // a film that lists its steps' kinds is taken at its word
  const listed = { ...film, steps: film.steps.map((s) => ({ ...s, kinds: ["backward"] })) };
  assert.ok(eventKinds(listed).every((k) => k.size === 1 && k.has("backward")));
});

test("nameTargets: the tensor each name refers to, as the events say", { skip: stale.skip }, () => {
  const { film } = stale;
  for (const step of film.steps) {
    for (const [name, tensor] of nameTargets(film, step)) {
      const said = film.steps.slice(0, step.index + 1).flatMap((s) => s.events)
        .map((e) => new RegExp(`^${name} now names (t\\d+)`).exec(e)).filter(Boolean).pop();
      assert.equal(tensor, said[1], `${name} at step ${step.index}`);
    }
  }
});
