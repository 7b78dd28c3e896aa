"""Helpers shared by the benchmark modules: lazy imports of what may not exist yet, and subscribers."""

from __future__ import annotations

import threading
import time
from typing import Any

from benchmarks._harness import Unavailable

MAX_DEMAND = 2**63 - 1


def flowable() -> Any:
    """The ``Flowable`` class (ImportError, hence n/a, while it does not exist)."""
    from rstreams import Flowable

    return Flowable


def schedulers() -> Any:
    """The ``rstreams.schedulers`` module (ImportError, hence n/a, while it does not exist)."""
    from rstreams import schedulers as s

    return s


def reactivex() -> tuple[Any, Any]:
    """(reactivex, reactivex.operators) or n/a."""
    try:
        import reactivex as rx
        import reactivex.operators as ops
    except ImportError:
        raise Unavailable("reactivex not installed (pip install -e '.[bench]')") from None
    return rx, ops


def aiostream() -> tuple[Any, Any]:
    """(aiostream.stream, aiostream.pipe) or n/a."""
    try:
        from aiostream import pipe, stream
    except ImportError:
        raise Unavailable("aiostream not installed (pip install -e '.[bench]')") from None
    return stream, pipe


def async_iterable(fl: Any) -> Any:
    """``fl`` itself if it supports ``async for``; NotImplementedError (n/a) while ``__aiter__`` is missing."""
    if not hasattr(fl, "__aiter__"):
        raise NotImplementedError(f"{type(fl).__name__}.__aiter__ missing")
    return fl


def call_varargs_or_list(fn: Any, sources: list[Any], *extra: Any) -> Any:
    """``fn(*sources, *extra)``, or ``fn(sources, *extra)`` when the factory takes one sequence."""
    try:
        return fn(*sources, *extra)
    except TypeError:
        return fn(sources, *extra)


class SumSubscriber:
    """A Reactive Streams subscriber summing and counting ints, with optional slowness.

    ``batch``: request(MAX_DEMAND) when None, else request(batch) and replenish by ``batch`` after each
    ``batch`` items. ``pause_every``/``pause_s``: sleep ``pause_s`` every ``pause_every`` items.
    """

    __slots__ = ("total", "count", "error", "_done", "_sub", "_batch", "_left", "_pause_every", "_pause_s")

    def __init__(self, batch: int | None = None, pause_every: int = 0, pause_s: float = 0.0) -> None:
        self.total = 0
        self.count = 0
        self.error: BaseException | None = None
        self._done = threading.Event()
        self._sub: Any = None
        self._batch = batch
        self._left = batch or 0
        self._pause_every = pause_every
        self._pause_s = pause_s

    def on_subscribe(self, subscription: Any) -> None:
        self._sub = subscription
        subscription.request(self._batch or MAX_DEMAND)

    def on_next(self, item: int) -> None:
        self.total += item
        self.count += 1
        if self._pause_every and self.count % self._pause_every == 0:
            time.sleep(self._pause_s)
        if self._batch is not None:
            self._left -= 1
            if self._left == 0:
                self._left = self._batch
                self._sub.request(self._batch)

    def on_error(self, error: BaseException) -> None:
        self.error = error
        self._done.set()

    def on_complete(self) -> None:
        self._done.set()

    def wait(self, timeout: float) -> int:
        """The sum once complete; the stream's error re-raised; TimeoutError if it never ends."""
        if not self._done.wait(timeout):
            if self._sub is not None:
                self._sub.cancel()
            raise TimeoutError(f"stream did not complete in {timeout:.0f} s ({self.count:,} items seen)")
        if self.error is not None:
            raise self.error
        return self.total
