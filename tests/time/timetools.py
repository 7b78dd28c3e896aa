"""Helpers for virtual-time tests of the time operators (no real sleeps)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rstreams.testing import TestPublisher, TestScheduler


def drive(
    ts: TestScheduler,
    tp: TestPublisher[Any],
    events: Iterable[tuple[float, Any]],
    end: float | None = None,
    complete: bool = True,
) -> None:
    """Emit ``value`` at virtual time ``t`` for each ``(t, value)`` (times ascending), then complete
    at ``end`` (default: the last time)."""
    last = ts.now()
    for t, v in events:
        ts.advance_to(max(t, last))
        last = max(t, last)
        tp.next(v)
    if end is not None:
        ts.advance_to(max(end, last))
    if complete:
        tp.complete()


def model_debounce(events: list[tuple[float, Any]], d: float) -> list[Any]:
    """An element is emitted if the next one comes at least ``d`` later (or it is the last)."""
    out = []
    for i, (t, v) in enumerate(events):
        if i + 1 == len(events) or events[i + 1][0] - t >= d:
            out.append(v)
    return out


def model_throttle_first(events: list[tuple[float, Any]], d: float) -> list[Any]:
    out = []
    gate_until = None
    for t, v in events:
        if gate_until is None or t >= gate_until:
            out.append(v)
            gate_until = t + d
    return out
