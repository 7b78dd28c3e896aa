"""The code in the guides runs against the current API: each page's ```python blocks are run, in
order, as one program (a block may use what an earlier block on the page defined).

A block that cannot run here says why on the line before it: ``<!-- not run: reason -->``. Code
included from examples/ (``--8<--``) is run by test_examples.py instead.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "docs" / "index.md", *(ROOT / "docs" / "guides").glob("*.md")])
_BLOCK = re.compile(r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)\n```", re.S)


def blocks(page: Path) -> list[str]:
    out = []
    for m in _BLOCK.finditer(page.read_text(encoding="utf-8")):
        if m.group("before").strip().startswith("<!-- not run"):
            continue
        out.append(m.group("code"))
    return out


def test_every_guide_has_runnable_code_or_says_why_not() -> None:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert blocks(page) or "<!-- not run" in text or "--8<--" in text, f"{page.name}: no code"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_the_code_of_the_page_runs(page: Path, tmp_path: Path) -> None:
    code = blocks(page)
    if not code:
        pytest.skip(f"{page.name} has no runnable ```python block")
    program = "\n\n".join(f"# --- block {i + 1}\n{c}" for i, c in enumerate(code))
    script = tmp_path / f"{page.stem}.py"
    script.write_text(program, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, f"the code of {page.name} failed:\n{proc.stdout}\n{proc.stderr}"
