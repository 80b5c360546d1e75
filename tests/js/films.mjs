// Real films for the stepper's helpers: made by this checkout's gradtrace (tests/js/make_film.py) from
// programs PyTorch runs, so every figure a test reads is PyTorch's own.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

/** `{film, skip}`: the film of make_film.py's program `name` (skip false), or no film and a reason to skip
 *  when Python or torch cannot run (unless GT_REQUIRE_FILMS is set: then that is an error). */
export function realFilm(name) {
  if (process.env.GT_FILMS) { // made once by tests/test_js_units.py for every test file
    return { film: JSON.parse(readFileSync(`${process.env.GT_FILMS}/${name}.json`, "utf-8")), skip: false };
  }
  const python = process.env.GT_PYTHON || "python3";
  const src = here("../../src");
  const env = { ...process.env, PYTHONPATH: [src, process.env.PYTHONPATH].filter(Boolean).join(":") };
  try {
    const out = execFileSync(python, [here("./make_film.py"), name], { env, maxBuffer: 64 << 20, stdio: "pipe" });
    return { film: JSON.parse(out.toString("utf-8")), skip: false };
  } catch (err) {
    if (process.env.GT_REQUIRE_FILMS) throw err; // run by tests/test_js_units.py: Python is there, so a failure is one
    return { film: null, skip: `no film (${python} tests/js/make_film.py ${name} failed: ${String(err.stderr || err).trim().split("\n").pop()})` };
  }
}

/** The stepper module, imported as the page imports it. */
export const stepper = await import(new URL("../../src/gradtrace/render/static/stepper.js", import.meta.url).href);
