"""Progress for long Spark work: a one-line live display on a terminal (rich when installed),
quiet under pytest or when output is not a terminal, and a one-screen summary at the end."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, TextIO

__all__ = ["Progress", "progress_enabled"]


def progress_enabled(stream: TextIO | None = None) -> bool:
    s = stream or sys.stderr
    if os.environ.get("PYTEST_CURRENT_TEST") or os.environ.get("RSTREAMS_QUIET"):
        return False
    return bool(getattr(s, "isatty", lambda: False)())


class Progress:
    """``update(rows=..., batches=...)`` from any thread; redraws at most every 0.2 s."""

    def __init__(self, label: str, enabled: bool | None = None, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = progress_enabled(self.stream) if enabled is None else enabled
        self.rows = 0
        self.batches = 0
        self.start = time.monotonic()
        self._last = 0.0
        self._lock = threading.Lock()  # guards the counters and the terminal line

    def update(self, rows: int = 0, batches: int = 0) -> None:
        with self._lock:
            self.rows += rows
            self.batches += batches
            now = time.monotonic()
            if self.enabled and now - self._last >= 0.2:
                self._last = now
                self._draw(now)

    def _draw(self, now: float) -> None:
        dt = max(now - self.start, 1e-9)
        self.stream.write(
            f"\r{self.label}: {self.rows:,} rows  {self.rows / dt:,.0f} rows/s  {self.batches} batches committed  "
        )
        self.stream.flush()

    def close(self) -> dict[str, Any]:
        with self._lock:
            dt = time.monotonic() - self.start
            if self.enabled:
                self._draw(time.monotonic())
                self.stream.write("\n")
                self.stream.flush()
            return {"rows": self.rows, "batches": self.batches, "seconds": dt}
