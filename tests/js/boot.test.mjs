// The notebook's loader (notebook/static/boot.js): what it reads from the page, and how it unpacks it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { gzipSync } from "node:zlib";

const boot = await import(new URL("../../src/gradtrace/notebook/static/boot.js", import.meta.url).href);

// A page holding some <script type="application/json" data-gt-stepper="..."> elements (only what pairsOf reads).
function page(...scripts) {
  const found = scripts.map(([key, text]) => ({ dataset: key === null ? {} : { gtStepper: key }, textContent: text }));
  return { querySelectorAll: (selector) => (selector.includes("data-gt-stepper") ? found : []) };
}

test("pairsOf: one pair per key, and data that is not a pair is left out", () => {
  const pair = JSON.stringify({ css: "Y3Nz", js: "anM=" });
  const pairs = boot.pairsOf(page(["gradtrace-a", pair], ["gradtrace-a", pair], ["gradtrace-b", pair],
    ["gradtrace-c", "{not json"], ["gradtrace-d", JSON.stringify({ css: "x" })], [null, pair]));
  assert.deepEqual(pairs, [{ key: "gradtrace-a", css: "Y3Nz", js: "anM=" }, { key: "gradtrace-b", css: "Y3Nz", js: "anM=" }]);
  assert.deepEqual(boot.pairsOf(page()), []);
});

test("unpack reads what gzip and base64 packed", async () => {
  const text = "export function mount() {}\n// ✓ « » \u2028";
  assert.equal(await boot.unpack(gzipSync(Buffer.from(text, "utf-8")).toString("base64")), text);
});
