"""Fixtures for the documentation tests: the strict site build, shared by the tests that need it."""

from __future__ import annotations

import importlib.util
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
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once per test process with the strict build."""
    if not docs_extra_installed():
        pytest.skip(DOCS_EXTRA_MISSING)
    out = tmp_path_factory.mktemp("site")
    proc, seconds = strict_build(out)
    BUILD_SECONDS.append(seconds)
    if proc.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return out
