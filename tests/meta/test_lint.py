"""The code base stays clean: ruff on everything, mypy --strict on src/ (as CI requires)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tool(name: str) -> str:
    exe = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.exists(exe):
        return exe
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: it is part of the dev extra (make test installs it)")
    return found


def test_ruff_is_clean() -> None:
    r = subprocess.run([_tool("ruff"), "check", "--quiet", "."], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_strict_is_clean() -> None:
    r = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
