"""log (Reactor's ``log``): every signal crossing this point, through the standard ``logging`` module.

Each record says the stage's name, the signal and the thread it happened on, e.g.
``orders | request(128) | thread rstreams-single-1``; logged on the ``rstreams.log`` logger (or
``rstreams.log.<name>``), so the usual handlers, levels and filters apply. Elements pass through
unchanged; the cost is one check of the logger's level per signal when a signal is not logged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any, Final, TypeVar, final

from ..._internal.atomics import AtomicInt
from ..._spec import Subscriber, Subscription
from .._base import BasicSubscriber
from .._flowable import Flowable

__all__ = ["SIGNALS", "log"]

T = TypeVar("T")

SIGNALS: Final = frozenset({"on_subscribe", "request", "on_next", "on_error", "on_complete", "cancel"})
_DEFAULT: Final = SIGNALS - {"on_next"}
_ids = AtomicInt(0)  # race: two threads assembling log() stages at once get distinct default names


@final
class _LogFlowable(Flowable[T]):
    __slots__ = ("_source", "_name", "_level", "_signals", "_logger")

    def __init__(self, source: Flowable[T], name: str, level: int, signals: frozenset[str], logger: logging.Logger) -> None:
        self._source = source
        self._name = name
        self._level = level
        self._signals = signals
        self._logger = logger

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        batches = getattr(subscriber, "on_next_batch", None) is not None
        cls = _LogBatchSubscriber if batches else _LogSubscriber
        self._source.subscribe(cls(subscriber, self))


class _LogSubscriber(BasicSubscriber[T, T]):
    __slots__ = ("_stage", "_log_next")

    def __init__(self, downstream: Subscriber[T], stage: _LogFlowable[T]) -> None:
        super().__init__(downstream)
        self._stage = stage
        self._log_next = "on_next" in stage._signals

    def _log(self, signal: str, text: str) -> None:
        stage = self._stage
        if signal in stage._signals and stage._logger.isEnabledFor(stage._level):
            stage._logger.log(stage._level, "%s | %s | thread %s", stage._name, text, threading.current_thread().name)

    def on_subscribe(self, subscription: Subscription) -> None:
        self._log("on_subscribe", "on_subscribe()")
        super().on_subscribe(subscription)

    def on_next(self, item: T) -> None:
        if self._log_next:
            self._log("on_next", f"on_next({item!r})")
        self.downstream.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if not self.done:
            self._log("on_error", f"on_error({error!r})")
        super().on_error(error)

    def on_complete(self) -> None:
        if not self.done:
            self._log("on_complete", "on_complete()")
        super().on_complete()

    def request(self, n: int) -> None:
        self._log("request", f"request({'unbounded' if type(n) is int and n >= 2**63 - 1 else repr(n)})")
        self.upstream.request(n)

    def cancel(self) -> None:
        self._log("cancel", "cancel()")
        self.upstream.cancel()


class _LogBatchSubscriber(_LogSubscriber[T]):
    """In front of a batch consumer: hands the library-internal batches on (logged one by one)."""

    __slots__ = ()

    def on_next_batch(self, items: list[T]) -> None:
        if self._log_next:
            for item in items:
                self._log("on_next", f"on_next({item!r})")
        self.downstream.on_next_batch(items)  # type: ignore[attr-defined]

    @property
    def accepts_batches(self) -> bool:
        return bool(getattr(self.downstream, "accepts_batches", True))


def log(source: Flowable[T], name: str | None, level: int, signals: Iterable[str] | None, logger: Any) -> Flowable[T]:
    if isinstance(signals, str):
        signals = (signals,)
    chosen = _DEFAULT if signals is None else frozenset(signals)
    unknown = sorted(chosen - SIGNALS)
    if unknown:
        raise ValueError(f"log(): unknown signals {unknown}; choose among {sorted(SIGNALS)}")
    if type(level) is not int:
        raise TypeError(f"log(): level must be a logging level (int), got {type(level).__name__}")
    if logger is None:
        logger = logging.getLogger("rstreams.log" if name is None else f"rstreams.log.{name}")
    elif not isinstance(logger, logging.Logger):
        raise TypeError(f"log(): logger must be a logging.Logger or None, got {type(logger).__name__}")
    stage = name if name is not None else f"log#{_ids.increment_and_get()}"
    return _LogFlowable(source, stage, level, chosen, logger)
