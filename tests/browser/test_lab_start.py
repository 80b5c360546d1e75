"""The JupyterLab the browser tests drive: it starts even when its port is taken before it binds it.

The port is chosen free, and the server binds it seconds later (longer on a loaded machine); another
process may take it meanwhile. Then the server exits ("port ... is not available") and is started again
on another free port.
"""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path

from lab import Lab

TESTS = Path(__file__).resolve().parents[1]


def test_lab_starts_on_another_port_when_its_port_was_taken(tmp_path: Path) -> None:
    server = Lab(TESTS / "notebooks", tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = server.port = int(taken.getsockname()[1])
        server.start()
        try:
            assert server.port != busy
            with urllib.request.urlopen(server.url("api/status"), timeout=30) as answer:
                assert answer.status == 200
        finally:
            server.stop()
