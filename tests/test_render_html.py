"""The standalone HTML page: parsed, checked for safety, and stepped in headless Chromium."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gradtrace.render.film import film, trace_html
from gradtrace.render.html import film_json

from real_traces import traced
from render_cases import PAYLOADS, evil_trace

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.data: dict[int, str] = {}
        self.open: int | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self.open = len(self.tags) - 1

    def handle_endtag(self, tag):  # noqa: ARG002  (HTMLParser's signature; any end tag closes)
        self.open = None

    def handle_data(self, data):
        if self.open is not None:
            self.data[self.open] = self.data.get(self.open, "") + data


def parse(page: str) -> Collect:
    c = Collect()
    c.feed(page)
    c.close()
    return c


def sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_page_structure_and_policy():
    page = trace_html(traced("rebind"))
    doc = parse(page)
    tags = [t for t, _ in doc.tags]
    assert tags == ["html", "head", "meta", "meta", "meta", "meta", "title", "style", "body", "div", "script", "script"]
    csp = doc.tags[3][1]["content"] or ""
    assert doc.tags[3][1]["http-equiv"] == "Content-Security-Policy"
    assert "default-src 'none'" in csp and "connect-src 'none'" in csp and "unsafe" not in csp
    module = doc.data[len(tags) - 1]
    assert sha(module) in csp and sha(doc.data[7]) in csp
    assert "http://" not in page.replace("http://www.w3.org/", "") and "https://" not in page


def test_film_json_round_trips():
    trace = traced("mutate")
    doc = parse(trace_html(trace))
    data = json.loads(doc.data[10])
    assert data == json.loads(json.dumps(film(trace)))


def test_payloads_never_become_markup():
    page = trace_html(evil_trace(), title=PAYLOADS[2])
    assert "<img" not in page and page.lower().count("</script") == 2
    assert "\u2028" not in page and "\u2029" not in page
    doc = parse(page)
    assert [t for t, _ in doc.tags].count("script") == 2
    assert all(not k.startswith("on") for _, attrs in doc.tags for k in attrs)
    data = json.loads(doc.data[10])
    assert list(data["steps"][0]["details"])  # the payload trace still has its details
    assert "\\u003c" in film_json({"a": "<"}) and "\\u2028" in film_json({"a": "\u2028"})


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"


def test_bidi_controls_never_reach_the_page_raw():
    """Trojan Source: the page's source holds bidi controls only as \\u escapes, and the film is unchanged."""
    import torch

    from gradtrace import trace_code

    code = 'access = "user"  # \u202e } \u2066if access != "admin":\u2069 \u2066\nglobals()["t\u200fag"] = 1\n'
    trace = trace_code(code, {"torch": torch}, filename="trojan\u202e.py")
    made = film(trace)
    page = trace_html(trace, title=None)
    assert not any(ch in page for ch in BIDI)
    data = json.loads(parse(page).data[10])
    assert data["source"] == code and data == json.loads(json.dumps(made))
    assert "\\u202e" in parse(page).data[6]  # the title shows the escape, as the text twin does


def _browser_run(path: Path, actions):
    """Drive Chromium in a thread of its own: earlier tests may have left an asyncio loop in this one."""
    pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium not installed")
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["result"] = _browser_session(path, actions)
        except BaseException as exc:  # handed back to the test's thread
            box["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]


def _browser_session(path: Path, actions):
    from playwright import sync_api

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            errors: list[str] = []
            requests: list[str] = []
            dialogs: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(path.as_uri())
            page.wait_for_selector(".gt-root")
            result = actions(page)
            page.wait_for_timeout(200)
        finally:
            browser.close()
    assert errors == [] and dialogs == []
    assert requests == [path.as_uri()]
    return result


@pytest.mark.browser
def test_browser_steps_with_arrow_keys(tmp_path):
    trace = traced("forum")
    path = tmp_path / "forum.html"
    path.write_text(trace_html(trace), encoding="utf-8")

    def act(page):
        page.keyboard.press("Home")  # the page opens at the first step that changes something: start at the first
        seen = [page.get_attribute(".gt-root", "data-step")]
        page.keyboard.press("ArrowRight")
        seen.append(page.get_attribute(".gt-root", "data-step"))
        page.keyboard.press("End")
        seen.append(page.get_attribute(".gt-root", "data-step"))
        line = page.text_content(".gt-srcline.gt-current .gt-code")
        grad = page.text_content("#gt-t1 text:nth-of-type(3)")
        hidden = page.get_attribute("#gt-t4", "class")
        page.keyboard.press("Home")
        hidden_first = page.get_attribute("#gt-t4", "class")
        page.click(".gt-next")
        page.click(".gt-next")
        page.click("#gt-t1")
        detail = page.text_content(".gt-details")
        return seen, line, grad, hidden, hidden_first, detail

    seen, line, grad, hidden, hidden_first, detail = _browser_run(path, act)
    assert seen == ["0", "1", str(len(trace) - 1)]
    assert line == trace[-1].code
    last = trace[-1]
    assert grad == f"grad {last.tensors['t1'].grad.text}"  # type: ignore[union-attr]
    assert "gt-hidden" not in hidden and "gt-hidden" in hidden_first
    assert "tensor t1" in detail and "leaf" in detail


@pytest.mark.browser
def test_browser_shows_payloads_as_text(tmp_path):
    path = tmp_path / "evil.html"
    path.write_text(trace_html(evil_trace()), encoding="utf-8")

    def act(page):
        page.click("#gt-t2")
        return (
            page.evaluate("document.querySelectorAll('img, iframe, object, embed').length"),
            page.evaluate("document.querySelectorAll('script').length"),
            page.text_content(".gt-source"),
            page.text_content(".gt-details"),
            page.evaluate("Array.from(document.querySelectorAll('svg text')).map(t => t.textContent).join('\\n')"),
        )

    imgs, scripts, source, detail, svg_text = _browser_run(path, act)
    assert imgs == 0 and scripts == 2
    assert "<img src=x onerror=alert(1)>" in source
    assert "<img src=x onerror=alert(1)>" in detail
    assert re.search(r"<img src=x onerror=alert\(1\)>", svg_text)
