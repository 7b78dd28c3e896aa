"""Fixtures for the documentation tests: the strict site build, shared by the tests that need it."""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DOCS_EXTRA_MISSING = (
    "the docs extra is not installed (mkdocs, mkdocs-material, mkdocstrings[python]): "
    "pip install -e '.[docs]' or `make docs`"
)


BUILD_SECONDS: list[float] = []  # how long the session's strict build took


def docs_extra_installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("mkdocs", "material", "mkdocstrings_handlers"))


def strict_build(out: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    """``mkdocs build --strict`` into ``out``: warnings (broken links, missing references) are errors.

    Never with ``--quiet``: it hides the warnings from the count, and the strict build then passes."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240,
    )
    return proc, time.monotonic() - t0


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The site, built once per test run with the strict build (pytest-xdist workers share it: the
    first one to take the lock builds, the others wait and reuse its output and its verdict)."""
    if not docs_extra_installed():
        pytest.skip(DOCS_EXTRA_MISSING)
    shared = tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    out, verdict = shared / "docs-site", shared / "docs-site.json"
    with open(shared / "docs-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder; the others wait here
        if not verdict.exists():
            proc, seconds = strict_build(out)
            verdict.write_text(json.dumps({"rc": proc.returncode, "seconds": seconds,
                                           "log": proc.stdout + proc.stderr}))
        result = json.loads(verdict.read_text())
    BUILD_SECONDS.append(result["seconds"])
    if result["rc"] != 0:
        pytest.fail(f"mkdocs build --strict failed ({result['rc']}):\n{result['log']}")
    return out
