"""A real JupyterLab server and a real Chromium, for the browser tests and the screenshot script.

Nothing here is mocked: :class:`Lab` starts ``jupyter lab`` on 127.0.0.1 with a
random token on a free port, :func:`launch` starts Debian's Chromium through
Playwright, and :class:`Guard` records every request that would leave 127.0.0.1
(and aborts it) and every dialog the page opens.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHROMIUM = os.environ.get("GRADTRACE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
LOCAL_HOSTS = {"127.0.0.1"}
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension:tracker": {"autoStartDefaultKernel": True},
}
LOCAL_SCHEMES = {"data", "blob", "about", "file", "chrome-extension", "devtools"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Lab:
    """``jupyter lab`` serving a copy of some notebooks; stopped by its PID."""

    def __init__(self, notebooks: Path, workdir: Path, *, log_name: str = "jupyterlab.log",
                 settings: dict[str, dict[str, Any]] | None = None) -> None:
        self.lab_settings = {**LAB_SETTINGS, **(settings or {})}
        self.root = workdir / "notebooks"
        shutil.copytree(notebooks, self.root, dirs_exist_ok=True)
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.log_path = workdir / log_name
        self.runtime = workdir / "runtime"
        self.settings = workdir / "lab-settings"
        self.workspaces = workdir / "lab-workspaces"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "lab") -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}/{path}{sep}token={self.token}"

    def command(self) -> list[str]:
        cmd = [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
            f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={self.root}",
            "--ServerApp.port_retries=0", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            f"--LabApp.user_settings_dir={self.settings}", f"--LabApp.workspaces_dir={self.workspaces}",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        return cmd

    def write_settings(self) -> None:
        """Lab settings for a quiet, reproducible session: no news toast, no kernel dialog."""
        for plugin, values in self.lab_settings.items():
            path = self.settings / (plugin.replace(":", "/") + ".jupyterlab-settings")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values), encoding="utf-8")
        self.workspaces.mkdir(parents=True, exist_ok=True)

    def start(self, timeout: float = 90.0, tries: int = 3) -> Lab:
        """Start the server and wait until it answers; on another free port when its port was taken meanwhile
        (the port is free when chosen, and another process may bind it before the server, seconds later, does)."""
        self.write_settings()
        env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(self.runtime), PYTHONUNBUFFERED="1")
        env.pop("GRADTRACE_WIDGET", None)
        for attempt in range(tries):
            log = open(self.log_path, "wb")  # noqa: SIM115 - closed with the process
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, env=env,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
            log.close()  # the child holds its own copy
            if self._answers(timeout):
                return self
            if self.port_taken() and attempt < tries - 1:
                self.port = free_port()
                continue
            break
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}: {self.log_tail()}")
        self.stop()
        raise RuntimeError(f"jupyter lab did not answer within {timeout:g}s: {self.log_tail()}")

    def _answers(self, timeout: float) -> bool:
        """Whether the server answers within ``timeout`` seconds (False at once when it exits)."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.url("api/status"), timeout=2) as r:
                    if r.status == 200:
                        return True
            except (urllib.error.URLError, OSError):
                time.sleep(0.3)
        return False

    def port_taken(self) -> bool:
        """Whether the server exited because its port was in use (jupyter_server says so in its log)."""
        return self.proc is not None and self.proc.poll() is not None and \
            f"port {self.port} is not available" in self.log_tail(20_000)

    def stop(self) -> None:
        """Terminate the server (its PID, then its process group's stragglers), then kill if needed."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def kernels(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(self.url("api/kernels"), timeout=5) as r:
            return list(json.loads(r.read().decode("utf-8")))

    def wait_kernel(self, timeout: float = 60.0, sleep: Any = time.sleep) -> None:
        """Until a kernel is idle with a browser connected to it (JupyterLab drops a run sent before that).

        With Playwright's sync API, pass ``sleep`` that lets the page run (``page.wait_for_timeout``):
        routed requests wait for Python, and ``time.sleep`` would hold them.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                kernels = self.kernels()
            except urllib.error.HTTPError:  # the server answers 500 while a kernel is half started
                kernels = []
            if any(k.get("execution_state") == "idle" and k.get("connections", 0) >= 1 for k in kernels):
                return
            sleep(0.25)
        raise RuntimeError(f"no idle, connected kernel after {timeout:g}s: {self.kernels()}")

    def log_tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return "(no log)"


def launch(playwright: Any) -> Any:
    """Debian's Chromium, headless (Playwright's own browser download does not work here)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


class Guard:
    """Records (and aborts) requests leaving 127.0.0.1, and dialogs, on one page."""

    def __init__(self, page: Any) -> None:
        self.outside: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        page.on("request", self._request)
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.route("**/*", self._route)

    @staticmethod
    def is_local(url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme in LOCAL_SCHEMES or parts.hostname in LOCAL_HOSTS

    def _request(self, request: Any) -> None:
        if not self.is_local(request.url):
            self.outside.append(request.url)

    def _route(self, route: Any) -> None:
        if self.is_local(route.request.url):
            route.continue_()
        else:
            route.abort()

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()


def open_notebook(page: Any, lab: Lab, name: str, timeout: float = 60_000) -> None:
    """Open ``name`` in JupyterLab and wait until its kernel is connected and idle."""
    page.goto(lab.url(f"lab/tree/{name}"), wait_until="domcontentloaded")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout)
    lab.wait_kernel(timeout / 1000, sleep=lambda s: page.wait_for_timeout(s * 1000))
    wait_idle(page, timeout)


def wait_idle(page: Any, timeout: float = 60_000) -> None:
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", state="attached",
                           timeout=timeout)


_ALL_RAN = """() => {
  const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
  return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
}"""
_STARTED = """() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
  .some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))"""


def run_all(page: Any, timeout: float = 120_000) -> None:
    """Run > Run All Cells through the menu bar (again if the first click found no kernel), then wait."""
    for attempt in range(3):
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        try:
            page.wait_for_function(_STARTED, timeout=10_000)
            break
        except Exception:
            if attempt == 2:
                raise
    page.wait_for_function(_ALL_RAN, timeout=timeout)
    wait_idle(page, timeout)


def give_keys(page: Any, root: Any) -> None:
    """A click on a notebook stepper's status line (not a control), then wait until the stepper has the keyboard.

    The stepper takes the focus a moment after the click (after JupyterLab's own mousedown handling): a key
    pressed before that goes to JupyterLab.
    """
    root.locator(".gt-status").click()
    page.wait_for_function("(r) => r.contains(document.activeElement)", arg=root.element_handle())


def new_page(browser: Any, **options: Any) -> tuple[Any, Any, Guard]:
    """A fresh context and page, guarded: outside requests aborted and recorded, dialogs recorded."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, **options)
    page = context.new_page()
    page.set_default_timeout(30_000)
    return context, page, Guard(page)


def lesson01_facts() -> dict[str, float]:
    """Lesson 01 (f = x**2 + x**3 at 42) by PyTorch: each path's gradient and x.grad."""
    import torch

    x = torch.tensor(42.0, requires_grad=True)
    (d2,) = torch.autograd.grad(x**2, x)
    (d3,) = torch.autograd.grad(x**3, x)
    f = x**2 + x**3
    f.backward()
    assert x.grad is not None
    return {"d2": d2.item(), "d3": d3.item(), "grad": x.grad.item()}


# ----------------------------------------------------------------- notebooks in a running lab
#: the first cell of the test notebooks
SETUP = "import torch\nimport gradtrace\n%load_ext gradtrace"
#: a quiz cell on f = x**2 + x**3 at 42 (its answer: :func:`quiz_grad`)
QUIZ = ("q = gradtrace.quiz('''\nx = torch.tensor(42., requires_grad=True)\nf = x ** 2 + x ** 3\nf.backward()\n''', "
        "ask='x.grad')\nq")


def quiz_grad() -> int:
    """The quiz's answer, by PyTorch."""
    import torch

    x = torch.tensor(42., requires_grad=True)
    (x ** 2 + x ** 3).backward()
    assert x.grad is not None
    return int(x.grad.item())


def write_notebook(path: Path, *sources: str) -> None:
    """A notebook of code cells (ids ``c0``, ``c1``, ...) with a Python 3 kernel."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    cells = []
    for i, src in enumerate(sources):
        cell = nbformat.v4.new_code_cell(src)
        cell["id"] = f"c{i}"
        cells.append(cell)
    nb.cells = cells
    nbformat.write(nb, path)


def stop_kernels(lab: Lab) -> None:
    for kernel in lab.kernels():
        req = urllib.request.Request(lab.url(f"api/kernels/{kernel['id']}"), method="DELETE")
        urllib.request.urlopen(req, timeout=30).close()


def open_alone(page: Any, lab: Lab, name: str, timeout: float = 90_000) -> None:
    """Open ``name`` as the only notebook (no tab restored from an earlier test), with its own kernel ready."""
    stop_kernels(lab)
    page.goto(lab.url(f"lab/tree/{name}?reset"), wait_until="domcontentloaded")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout)
    lab.wait_kernel(timeout / 1000, sleep=lambda s: page.wait_for_timeout(s * 1000))
    wait_idle(page, timeout)
    tabs = page.locator(".jp-NotebookPanel").count()
    assert tabs == 1, f"{tabs} notebooks open"


def save(page: Any) -> None:
    page.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')", timeout=30_000)
