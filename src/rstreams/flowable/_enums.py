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
