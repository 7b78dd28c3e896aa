"""Progress for long Spark work: a live display on a terminal (rich's, as the ``spark`` extra
installs it; a plain one-line display where rich is missing), quiet under pytest, with
``RSTREAMS_QUIET`` set, or when the output is not a terminal; and figures for a summary at the end.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, TextIO

__all__ = ["Progress", "progress_enabled"]


def progress_enabled(stream: TextIO | None = None) -> bool:
    """Whether a live display belongs on ``stream`` (default stderr): a terminal, outside pytest
    and without ``RSTREAMS_QUIET``."""
    s = stream or sys.stderr
    if os.environ.get("PYTEST_CURRENT_TEST") or os.environ.get("RSTREAMS_QUIET"):
        return False
    return bool(getattr(s, "isatty", lambda: False)())


class _RichDisplay:
    """rich's live progress bar: spinner, label, rows, rows/s, batches committed, elapsed."""

    def __init__(self, label: str, stream: TextIO) -> None:
        from rich.console import Console
        from rich.markup import escape
        from rich.progress import Progress as RichProgress
        from rich.progress import SpinnerColumn, TextColumn
        from rich.table import Column

        console = Console(file=stream, force_terminal=True)
        self._bar = RichProgress(
            SpinnerColumn(),
            # figures first: a narrow terminal cuts the label at the end, never the figures
            TextColumn(
                "{task.fields[rows]:,} rows  {task.fields[rate]:,.0f} rows/s  {task.fields[batches]} batches committed"
                "  {task.fields[clock]}  [bold]{task.description}",
                table_column=Column(no_wrap=True, overflow="ellipsis"),
            ),
            console=console,
            transient=False,
            auto_refresh=False,
        )
        self._task = self._bar.add_task(escape(label), total=None, rows=0, rate=0.0, batches=0, clock="0:00:00")
        self._bar.start()

    def draw(self, rows: int, batches: int, seconds: float) -> None:
        clock = time.strftime("%H:%M:%S", time.gmtime(seconds)).removeprefix("0")
        self._bar.update(self._task, rows=rows, rate=rows / seconds, batches=batches, clock=clock)
        self._bar.refresh()

    def close(self) -> None:
        self._bar.stop()


class _LineDisplay:
    """One line redrawn in place with a carriage return (no rich installed)."""

    def __init__(self, label: str, stream: TextIO) -> None:
        self._label = label
        self._stream = stream

    def draw(self, rows: int, batches: int, seconds: float) -> None:
        self._stream.write(f"\r{self._label}: {rows:,} rows  {rows / seconds:,.0f} rows/s  {batches} batches committed  ")
        self._stream.flush()

    def close(self) -> None:
        self._stream.write("\n")
        self._stream.flush()


def _display(label: str, stream: TextIO) -> _RichDisplay | _LineDisplay:
    try:
        return _RichDisplay(label, stream)
    except ImportError:
        return _LineDisplay(label, stream)


class Progress:
    """Counts rows and committed batches of a long job and shows them live.

    ``update(rows=..., batches=...)`` may be called from any thread; the display is redrawn at most
    every 0.2 s. ``close()`` draws the final figures and returns them (rows, batches, seconds).
    ``enabled=None`` decides by :func:`progress_enabled`; ``True`` or ``False`` forces it.

    Example::

        p = Progress("landing", enabled=False)
        p.update(rows=1000, batches=1)
        p.close()["rows"]        # 1000
    """

    def __init__(self, label: str, enabled: bool | None = None, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = progress_enabled(self.stream) if enabled is None else enabled
        self.rows = 0
        self.batches = 0
        self.start = time.monotonic()
        self._last = 0.0
        self._closed = False
        self._view: _RichDisplay | _LineDisplay | None = None
        self._lock = threading.Lock()  # guards the counters and the display (updates come from writer threads)

    def update(self, rows: int = 0, batches: int = 0) -> None:
        with self._lock:
            self.rows += rows
            self.batches += batches
            now = time.monotonic()
            if self.enabled and not self._closed and now - self._last >= 0.2:
                self._last = now
                self._draw(now)

    def _draw(self, now: float) -> None:
        if self._view is None:
            self._view = _display(self.label, self.stream)
        self._view.draw(self.rows, self.batches, max(now - self.start, 1e-9))

    def close(self) -> dict[str, Any]:
        with self._lock:
            dt = time.monotonic() - self.start
            if self.enabled and not self._closed:
                self._draw(time.monotonic())
                assert self._view is not None
                self._view.close()
            self._closed = True
            return {"rows": self.rows, "batches": self.batches, "seconds": dt}
