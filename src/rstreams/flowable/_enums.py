"""Strategies for producers that cannot be backpressured."""

from __future__ import annotations

from enum import Enum

__all__ = ["BackpressureStrategy", "BackpressureOverflow", "NOTSET"]


class BackpressureStrategy(Enum):
    """What ``Flowable.create`` does with items the downstream has not requested yet.

    * ``BUFFER``: keep every item until requested (unbounded memory: use with care).
    * ``DROP``: drop items that arrive without demand.
    * ``LATEST``: keep only the latest item that arrived without demand.
    * ``ERROR``: signal ``MissingBackpressureError`` when an item arrives without demand.
    * ``MISSING``: no strategy: items are pushed as they come; a downstream operator must cope
      (for example ``on_backpressure_buffer``).

    Example::

        def emit(e):
            for i in range(5): e.on_next(i)
            e.on_complete()
        Flowable.create(emit, BackpressureStrategy.DROP).test(2).assert_result(0, 1)
        ts = Flowable.create(emit, BackpressureStrategy.LATEST).test(0); ts.request(1); ts.assert_result(4)
    """

    MISSING = "missing"
    ERROR = "error"
    BUFFER = "buffer"
    DROP = "drop"
    LATEST = "latest"


class BackpressureOverflow(Enum):
    """What ``on_backpressure_buffer(capacity, on_overflow=...)`` does when its buffer is full.

    * ``ERROR``: cancel the upstream and signal ``MissingBackpressureError``.
    * ``DROP_OLDEST``: drop the oldest buffered item to make room.
    * ``DROP_LATEST``: drop the newest buffered item to make room.

    Example::

        f = Flowable.range(0, 10).on_backpressure_buffer(2, on_overflow=BackpressureOverflow.DROP_OLDEST)
        ts = f.test(0)                   # no demand yet: the buffer keeps the newest two
        ts.request(10); ts.assert_result(8, 9)
    """

    ERROR = "error"
    DROP_OLDEST = "drop_oldest"
    DROP_LATEST = "drop_latest"


class _NotSet(Enum):
    NOTSET = "NOTSET"

    def __repr__(self) -> str:
        return "NOTSET"


#: Marks an absent optional argument where ``None`` cannot serve (``None`` is never an element).
NOTSET = _NotSet.NOTSET
