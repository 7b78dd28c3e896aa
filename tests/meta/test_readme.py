"""The README's example runs and its set-up commands are the ones the Makefile and CI use."""

from __future__ import annotations

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _readme() -> str:
    with open(os.path.join(ROOT, "README.md")) as f:
        return f.read()


def test_readme_opens_with_make_demo_and_make_test() -> None:
    first_block = re.search(r"```sh\n(.*?)```", _readme(), re.S)
    assert first_block is not None
    assert "make demo" in first_block.group(1) and "make test" in first_block.group(1)
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        assert "make test" in f.read()


def test_readme_python_example_runs() -> None:
    block = re.search(r"```python\n(.*?)```", _readme(), re.S)
    assert block is not None
    r = subprocess.run([sys.executable, "-c", block.group(1)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:2] == ["6", "0"]
