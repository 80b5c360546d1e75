// Where the stepper opens, and the legend of the step it shows.
import assert from "node:assert/strict";
import { test } from "node:test";

import { realFilm, stepper } from "./films.mjs";

const { firstChange, frameClasses, legendItems, culpritClasses } = stepper;
const opening = realFilm("opening");
const stale = realFilm("stale");

test("firstChange skips a docstring, an import and a float: it opens where the first tensor is made",
  { skip: opening.skip }, () => {
    const { film } = opening;
    const at = firstChange(film);
    assert.equal(film.steps[at].code, "x = torch.tensor(42., requires_grad=True)");
    assert.ok(film.steps.slice(0, at).every((s) => !s.events.length)); // nothing before it changed anything
    assert.equal(firstChange({ steps: [{ events: [] }, { events: [] }] }), 0); // nothing changes: the first step
    assert.equal(firstChange({ steps: [] }), 0);
  });

const labels = (film, i) => {
  const step = film.steps[i];
  const more = new Map();
  culpritClasses(step, more);
  return legendItems(film, frameClasses(film.frames[step.frame], more)).map((item) => item.label);
};

test("the legend lists the marks of the shown step's picture, not the whole trace's", { skip: stale.skip }, () => {
  const { film } = stale;
  const at = (code) => film.steps.findIndex((s) => s.code === code);
  const first = labels(film, at("a = torch.tensor([1., 2., 3.], requires_grad=True)"));
  assert.ok(first.includes("leaf tensor") && first.includes("new this step"), first);
  for (const later of ["changed in place (same object, new version)", "holds a stale saved value",
    "involved in this step's error", "backward node", "a node's next_functions (inputs)"]) {
    assert.ok(!first.includes(later), `${later} listed at the first step: ${first}`);
  }
  const mutated = labels(film, at("b.add_(1)"));
  assert.ok(mutated.includes("changed in place (same object, new version)"), mutated);
  assert.ok(!mutated.includes("involved in this step's error"), mutated);
  const failed = labels(film, film.error_step);
  assert.ok(failed.includes("involved in this step's error"), failed);
});
