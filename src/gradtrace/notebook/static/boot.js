// gradtrace notebook loader: starts the stepper of a notebook's static HTML (notebook/embed.py).
//
// The same text every time, inlined as <script type="module"> after the fragment's data. The data
// is JSON, never code: <script type="application/json" data-gt-stepper="<key>"> holds
// {"css": ..., "js": ...}, the stepper's CSS and its ES module (render/static/stepper.js), each
// gzip-compressed and base64-encoded, and <key> names that pair (from their digest). Each key's CSS
// is added to the page once and its module imported once, however many outputs carry it; the
// module's boot() then mounts every film of the page (<script type="application/json" data-gt-film>).

/** The text of gzip-compressed, base64-encoded bytes (the browser's own DecompressionStream). */
export async function unpack(b64) {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
}

/** The stepper pairs the page carries, one per key: [{key, css, js}] (a pair that is not well formed is left out). */
export function pairsOf(doc) {
  const out = new Map();
  for (const data of Array.from(doc.querySelectorAll('script[type="application/json"][data-gt-stepper]'))) {
    const key = data.dataset.gtStepper;
    if (!key || out.has(key)) continue;
    let pair = null;
    try {
      pair = JSON.parse(data.textContent);
    } catch {
      continue;
    }
    if (pair && typeof pair.css === "string" && typeof pair.js === "string") out.set(key, { key, ...pair });
  }
  return Array.from(out.values());
}

async function start(doc, { key, css, js }) {
  if (!doc.querySelector(`style[data-gt-css="${key}"]`)) {
    const style = doc.createElement("style");
    style.dataset.gtCss = key;
    doc.head.appendChild(style);
    style.textContent = await unpack(css);
  }
  globalThis[key] ??= unpack(js).then((code) => import(URL.createObjectURL(new Blob([code], { type: "text/javascript" }))));
  (await globalThis[key]).boot(doc);
}

/** Start every stepper the page carries; a notebook may run this before its output is attached: then wait for it. */
export function load(doc, tries = 0) {
  const pairs = pairsOf(doc);
  if (!pairs.length && tries < 120) {
    requestAnimationFrame(() => load(doc, tries + 1));
    return;
  }
  for (const pair of pairs) start(doc, pair);
}

if (typeof document !== "undefined" && typeof requestAnimationFrame === "function") load(document);
