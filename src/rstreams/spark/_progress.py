"""Progress for long Spark work: a live display on a terminal (rich's, as the ``spark`` extra
installs it; a plain one-line display where rich is missing), quiet under pytest, with
``RSTREAMS_QUIET`` set, or when the output is not a terminal; and figures for a summary at the end.

:class:`Progress` counts one landing (rows, batches committed). :class:`StatusBoard` tells a
person what a multi-phase job is doing: a line the moment a phase starts ("starting Spark
(local[*])..."), live figures while it runs (records, records/s, micro-batches, tasks) on a
terminal, and one short line per finished phase everywhere else (a log, a pipe, CI).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, TextIO

__all__ = ["Phase", "Progress", "StatusBoard", "progress_enabled"]


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


class Phase:
    """One phase of a :class:`StatusBoard`: figures set from any thread, shown live on a terminal.

    Use it as a context manager (or call :meth:`finish`): leaving it draws the final figures, or
    prints one line when the output is not a terminal. Records per second are records over the
    phase's wall time so far.
    """

    def __init__(self, board: StatusBoard, label: str, records: bool = True) -> None:
        self.label = label
        self.show_records = records
        self.records = 0
        self.batches: int | None = None
        self.tasks: tuple[int, int] | None = None
        self.note = ""
        self.start = time.monotonic()
        self.seconds = 0.0
        self._board = board
        self._lock = threading.Lock()  # figures come from Spark's threads and monitor threads
        self._done = False
        self._bar: Any = None
        self._task: Any = None
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()
        if board.enabled and board.live:
            self._open_live()

    # -- figures ------------------------------------------------------------------------------

    def update(
        self,
        records: int | None = None,
        batches: int | None = None,
        tasks: tuple[int, int] | None = None,
        note: str | None = None,
    ) -> None:
        """Set the figures that are given (absolute values, not increments)."""
        with self._lock:
            if records is not None:
                self.records = records
            if batches is not None:
                self.batches = batches
            if tasks is not None:
                self.tasks = tasks
            if note is not None:
                self.note = note

    def rate(self) -> float:
        """Records per second so far (or over the whole phase once finished)."""
        dt = self.seconds if self._done else time.monotonic() - self.start
        return self.records / dt if dt > 0 else 0.0

    def figures(self) -> str:
        """The figures as one short text: ``"120,000 records  40,000 records/s  3/8 tasks"``."""
        with self._lock:
            parts = [f"{self.records:,} records", f"{self.rate():,.0f} records/s"] if self.show_records else []
            if self.batches is not None:
                parts.append(f"{self.batches} micro-batches")
            if self.tasks is not None:
                parts.append(f"{self.tasks[0]}/{self.tasks[1]} tasks")
            if self.note:
                parts.append(self.note)
        return "  ".join(parts)

    # -- display ------------------------------------------------------------------------------

    def _open_live(self) -> None:
        try:
            from rich.console import Console
            from rich.markup import escape
            from rich.progress import Progress as RichProgress
            from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn
            from rich.table import Column
        except ImportError:
            self._bar = None
            self._stop.clear()
        else:
            console = Console(file=self._board.stream, force_terminal=True)
            self._bar = RichProgress(
                SpinnerColumn(),
                # figures first: a narrow terminal cuts the label at the end, never the figures
                TextColumn("{task.fields[figures]}"),
                TimeElapsedColumn(),
                TextColumn("[bold]{task.description}", table_column=Column(no_wrap=True, overflow="ellipsis")),
                console=console,
                transient=False,
                auto_refresh=False,
            )
            self._task = self._bar.add_task(escape(self.label), total=None, figures="")
            self._bar.start()
        t = threading.Thread(target=self._tick, name="rstreams-status", daemon=True)
        self._ticker = t
        t.start()

    def _tick(self) -> None:
        while not self._stop.wait(0.25):
            self._draw()

    def _draw(self) -> None:
        text = self.figures()
        if self._bar is not None:
            self._bar.update(self._task, figures=text)
            self._bar.refresh()
        else:
            self._board.stream.write(f"\r{self.label}: {text}  ")
            self._board.stream.flush()

    def finish(self, note: str | None = None) -> Phase:
        """End the phase: final figures on a terminal, else one line. Idempotent."""
        if note is not None:
            self.update(note=note)
        with self._lock:
            if self._done:
                return self
            self.seconds = time.monotonic() - self.start
            self._done = True
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._draw()
            if self._bar is not None:
                self._bar.stop()
            else:
                self._board.stream.write("\n")
                self._board.stream.flush()
        elif self._board.enabled:
            self._board.say(f"{self.label}: {self.figures()} in {self.seconds:.1f} s")
        return self

    def __enter__(self) -> Phase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()


class StatusBoard:
    """What a multi-phase job is doing, for the person running it.

    :meth:`say` prints a line at once (``"rstreams demo: starting Spark (local[*])..."``);
    :meth:`phase` opens a :class:`Phase` whose figures are redrawn live every 0.25 s on a terminal
    (rich's display); elsewhere (``live=False``: a pipe, a log file, CI) each phase prints one
    short line when it ends. ``enabled=False`` prints nothing at all. ``live=None`` decides by
    :func:`progress_enabled`.

    Example::

        board = StatusBoard("rstreams demo", live=False)
        board.say("starting Spark (local[*])...")
        with board.phase("pipeline on the executors") as ph:
            ph.update(records=1000, tasks=(8, 8))
        # rstreams demo: pipeline on the executors: 1,000 records  ... records/s  8/8 tasks in 0.0 s

    Backpressure: none to give: figures are plain assignments, read by the display thread every
    0.25 s, so a job never waits for its progress display.
    """

    def __init__(self, name: str, *, enabled: bool = True, live: bool | None = None, stream: TextIO | None = None) -> None:
        self.name = name
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.live = progress_enabled(self.stream) if live is None else live
        self._lock = threading.Lock()  # one line at a time

    def say(self, text: str) -> None:
        """Print ``text`` as one line, prefixed with the job's name (nothing when disabled)."""
        if not self.enabled:
            return
        with self._lock:
            self.stream.write(f"{self.name}: {text}\n")
            self.stream.flush()

    def phase(self, label: str, records: bool = True) -> Phase:
        """Start a phase; finish it with ``with`` or :meth:`Phase.finish`. ``records=False``: a
        phase whose figures are tasks and a note only (no records, no records/s)."""
        return Phase(self, label, records)
