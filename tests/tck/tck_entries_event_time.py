"""TCK lines for the event-time windows: ``make(n)`` emits exactly n windows (element i has event
time i, and its own window of size 1 or session of gap 0.5)."""

from __future__ import annotations

from typing import Any

from library_publishers import Entry

from rstreams import Flowable


def _r(n: int) -> Flowable[int]:
    return Flowable.range(0, n)


def _failed() -> Flowable[Any]:
    return Flowable.error(RuntimeError("failed publisher")).tumbling_window(1, timestamp=float)


ENTRIES: dict[str, Entry] = {
    "tumbling_window": Entry(lambda n: _r(n).tumbling_window(1, timestamp=float, aggregate="count"),
                             max_elements=100_000, failed=_failed),
    "sliding_window": Entry(lambda n: _r(n).sliding_window(1, 1, timestamp=float, aggregate="count"), max_elements=100_000),
    "session_window": Entry(lambda n: _r(n).session_window(0.5, timestamp=float, aggregate="count"), max_elements=100_000),
    # unfused source, keyed, a reducer
    "tumbling_window_hidden": Entry(
        lambda n: _r(n).hide().tumbling_window(1, timestamp=float, key=lambda x: x % 3, aggregate="sum"),
        max_elements=100_000,
    ),
    # unfused source, the general path (process= runs through concat_map)
    "session_window_hidden": Entry(
        lambda n: _r(n).hide().session_window(0.5, timestamp=float, process=lambda w: w.count()), max_elements=10_000
    ),
    # early results (unfused sources): elements 2j and 2j+1 share window j; a pair gives an early
    # result and the final one, a trailing single element its final one: n results for n elements
    "tumbling_window_hidden_early": Entry(
        lambda n: _r(n).hide().tumbling_window(1, timestamp=lambda x: x // 2, aggregate="count", early_every=2),
        max_elements=100_000,
    ),
    "session_window_hidden_early": Entry(
        lambda n: _r(n).hide().session_window(0.5, timestamp=lambda x: x // 2, aggregate="count", early_every=2),
        max_elements=100_000,
    ),
}
