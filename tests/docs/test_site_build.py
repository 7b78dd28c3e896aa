"""`make test` runs the documentation site's strict build: a broken link, a missing page or a reference
mkdocstrings cannot resolve fails it (MkDocs' --strict turns every warning into an error)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import BUILD_SECONDS, DOCS_EXTRA_MISSING, ROOT, docs_extra_installed


def test_the_strict_build_succeeds_and_writes_the_pages(built_site: Path) -> None:
    for page in ("index.html", "guides/backpressure.html", "reference/operators/index.html",
                 "reference/operators/transforming.html", "reference/api/testing.html", "performance.html"):
        assert (built_site / page).is_file(), f"{page} missing from the built site"


def test_an_operator_page_embeds_its_recorded_marble_diagram_and_docstring(built_site: Path) -> None:
    html = (built_site / "reference/operators/transforming.html").read_text(encoding="utf-8")
    assert 'src="../../marbles/map.svg"' in html
    assert (built_site / "marbles/map.svg").is_file()
    assert "Transform each element with" in html  # map's docstring, rendered by mkdocstrings
    assert "<strong>Backpressure:</strong>" in html


def test_every_public_flowable_method_has_an_entry(built_site: Path) -> None:
    from rstreams import Flowable

    pages = "".join(p.read_text(encoding="utf-8") for p in (built_site / "reference/operators").glob("*.html"))
    names = [n for n in dir(Flowable) if not n.startswith("_") and callable(getattr(Flowable, n))]
    missing = [n for n in names if not re.search(rf'id="{re.escape(n)}"', pages)]
    assert not missing, f"public Flowable methods without an entry on the operator pages: {missing}"


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    if not docs_extra_installed():
        pytest.skip(DOCS_EXTRA_MISSING)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[gone](nowhere.md)\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nstrict: true\n")
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "out")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "nowhere.md" in proc.stdout + proc.stderr


def test_the_build_is_fast_enough_for_make_test(built_site: Path) -> None:
    seconds = BUILD_SECONDS[0]
    assert seconds < 60, f"the strict build took {seconds:.1f} s (budget: 60 s on 2 cores)"


def test_make_docs_and_the_test_build_use_one_config() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^docs: \$\(STAMP_DOCS\)\n\t\$\(BIN\)/mkdocs build --strict", makefile, re.M)
    assert "site/" in (ROOT / ".gitignore").read_text().split()
