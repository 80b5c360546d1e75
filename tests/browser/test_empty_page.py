"""The page of a script with no statement to run, made by the real ``gradtrace`` command, in real Chromium."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from lab import new_page

from programs import gradtrace_command

COMMAND = gradtrace_command()  # the entry point of the Python running the tests


@pytest.mark.parametrize("source", ["", "# only a comment\n\n# and another\n"])
def test_a_page_with_no_steps_says_that_no_statement_ran(browser: Any, tmp_path: Path, source: str) -> None:
    (tmp_path / "empty.py").write_text(source, encoding="utf-8")
    done = subprocess.run([*COMMAND, "run", "empty.py", "--html", "out.html"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    context, page, guard = new_page(browser)
    try:
        page.goto((tmp_path / "out.html").as_uri())
        status = page.locator(".gt-status").first
        status.wait_for(state="attached")
        page.wait_for_function("() => document.querySelector('.gt-status').textContent !== ''")
        assert status.text_content() == "no statement ran: the code has nothing to step through"
    finally:
        context.close()
    assert guard.errors == [], guard.errors
