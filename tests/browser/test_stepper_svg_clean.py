"""The stepper's SVG cleaner in real Chromium: no event handler survives, on the root ``<svg>`` either.

The film's pictures are gradtrace's own Graphviz output, yet the stepper cleans them as
untrusted (defence in depth): a page without a Content-Security-Policy, as JupyterLab
shows the widget, would run an ``onload`` left on the root element.
"""

from __future__ import annotations

from typing import Any

import torch

from gradtrace import trace_code
from gradtrace.render.film import film as make_film

ACTIVE = ' onload="document.title=\'ran\'" onclick="document.title=\'clicked\'" style="display:none"'


def test_root_svg_handlers_are_removed(stepper: Any) -> None:
    trace = trace_code("x = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\ny.backward()\n",
                       {"torch": torch}, filename="clean")
    film = make_film(trace)
    assert film["sheets"] and all(s.startswith("<svg ") for s in film["sheets"])
    film["sheets"] = [s.replace("<svg ", "<svg" + ACTIVE + " ", 1) for s in film["sheets"]]
    page = stepper(film)
    kept = page.evaluate("""() => Array.from(document.querySelectorAll('.gt-root svg')).flatMap(
        (svg) => [svg, ...svg.querySelectorAll('*')].flatMap((el) => el.getAttributeNames()
            .filter((n) => n.toLowerCase().startsWith('on') || n.toLowerCase() === 'style')))""")
    assert kept == []
    assert page.locator(".gt-root svg").count() >= 1
