"""The types editors and checkers infer for the public API (``expectations.py``), checked by
``mypy --strict`` and ``pyright --strict`` (both from the dev extra; the pyright wheel bundles
pyright itself and runs it on the machine's Node.js, so no download at test time).

A failure prints the checker's own diagnostics: the line, the inferred type, the expected type.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BOTH = os.path.join(HERE, "expectations.py")
PYRIGHT_ONLY = os.path.join(HERE, "expectations_pyright.py")


def test_expectations_hold_in_mypy_strict() -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.fail("mypy is not installed: it is part of the dev extra (make test installs it)")
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", BOTH],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, f"mypy --strict over {os.path.relpath(BOTH, ROOT)}:\n{r.stdout}{r.stderr}"


def _pyright_diagnostics(paths: list[str]) -> tuple[list[dict[str, object]], str]:
    if importlib.util.find_spec("pyright") is None:
        pytest.skip("pyright is not installed: it is part of the dev extra (pip install -e '.[dev]')")
    env = dict(os.environ)
    env["PYRIGHT_PYTHON_IGNORE_WARNINGS"] = "1"  # no PyPI version check (works offline)
    r = subprocess.run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable, *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    try:
        report = json.loads(r.stdout)
    except ValueError:
        if shutil.which("node") is None:
            # pyright-python then fetches Node.js through nodeenv, which needs the network
            pytest.skip(f"pyright needs Node.js: none on PATH and none could be fetched:\n{r.stderr[-2000:]}")
        pytest.fail(f"pyright did not run (exit {r.returncode}):\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    diagnostics: list[dict[str, object]] = report.get("generalDiagnostics", [])
    return diagnostics, r.stdout


def _format(diagnostics: list[dict[str, object]]) -> str:
    lines = []
    for d in diagnostics:
        rng = d.get("range")
        line = rng["start"]["line"] + 1 if isinstance(rng, dict) else "?"
        lines.append(f"{os.path.relpath(str(d.get('file')), ROOT)}:{line}: {d.get('severity')}: {d.get('message')}")
    return "\n".join(lines)


def test_expectations_hold_in_pyright_strict() -> None:
    diagnostics, _ = _pyright_diagnostics([BOTH, PYRIGHT_ONLY])
    problems = [d for d in diagnostics if d.get("severity") in ("error", "warning")]
    assert not problems, "pyright --strict:\n" + _format(problems)
