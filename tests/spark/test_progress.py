"""The live progress display of long Spark work (no SparkSession needed)."""

from __future__ import annotations

import io
import threading

import pytest

from rstreams.spark import Progress
from rstreams.spark._progress import progress_enabled


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_quiet_when_not_a_terminal() -> None:
    out = io.StringIO()
    p = Progress("landing", stream=out)
    assert p.enabled is False
    p.update(rows=10, batches=1)
    assert p.close()["rows"] == 10
    assert out.getvalue() == ""


def test_quiet_under_pytest_even_on_a_terminal() -> None:
    assert progress_enabled(_Terminal()) is False  # PYTEST_CURRENT_TEST is set here


def test_quiet_with_rstreams_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    monkeypatch.setenv("RSTREAMS_QUIET", "1")
    assert progress_enabled(_Terminal()) is False


def test_on_a_terminal_outside_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    monkeypatch.delenv("RSTREAMS_QUIET", raising=False)
    assert progress_enabled(_Terminal()) is True


def test_rich_display_shows_rows_rate_and_batches() -> None:
    pytest.importorskip("rich")
    out = _Terminal()
    p = Progress("to_spark /tmp/x", enabled=True, stream=out)
    p.update(rows=1234, batches=1)
    p.update(rows=1000, batches=1)
    figures = p.close()
    text = out.getvalue()
    assert figures["rows"] == 2234 and figures["batches"] == 2 and figures["seconds"] >= 0
    assert "to_spark /tmp/x" in text
    assert "2,234 rows" in text
    assert "rows/s" in text
    assert "2 batches committed" in text


def test_line_display_without_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    import rstreams.spark._progress as mod

    def no_rich(label: str, stream: object) -> object:
        raise ImportError("rich")

    monkeypatch.setattr(mod, "_RichDisplay", no_rich)
    out = io.StringIO()
    p = Progress("land", enabled=True, stream=out)
    p.update(rows=5, batches=1)
    p.close()
    text = out.getvalue()
    assert text.startswith("\rland: 5 rows")
    assert "1 batches committed" in text and text.endswith("\n")


def test_updates_from_many_threads_are_all_counted_and_close_is_idempotent() -> None:
    p = Progress("x", enabled=False)

    def work() -> None:
        for _ in range(1000):
            p.update(rows=1)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert p.close()["rows"] == 4000
    p.update(rows=1)  # after close: counted, never drawn
    assert p.close()["rows"] == 4001


def test_rich_display_takes_labels_with_brackets_literally() -> None:
    pytest.importorskip("rich")
    out = _Terminal()
    p = Progress("to_spark /data/[2026]/x", enabled=True, stream=out)
    p.update(rows=1, batches=1)
    p.close()
    assert "/data/[2026]/x" in out.getvalue()
