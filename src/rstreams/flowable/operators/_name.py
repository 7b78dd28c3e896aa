"""name / tag (Reactor's ``name``/``tag`` with ``metrics``): a named stage counts its signals.

Every subscription of a named stage gets a :class:`~rstreams._internal.metrics.Meter` from the
registry's StageMetrics for (name, tags): subscribed, requested, emitted, completed, failed and
cancelled counters, and the gauges read from it (outstanding demand; elements queued in the stage
just above, read from its Subscription when it keeps a queue). Counting is one attribute increment
per element, with one writer per counter (see ``_internal/metrics.py``); no lock per element.
``tag`` on a named stage adds to its tags (no second meter); on any other Flowable it creates a
stage named ``"unnamed"``.
"""

from __future__ import annotations

import threading
from typing import Any, TypeVar, final

from ..._internal import metrics
from ..._internal.introspect import queued_of
from ..._internal.requests import add_cap
from ..._spec import Subscriber, Subscription
from .._base import BasicSubscriber
from .._flowable import Flowable

__all__ = ["name", "tag"]

T = TypeVar("T")


@final
class _NamedFlowable(Flowable[T]):
    __slots__ = ("_source", "stage_name", "tags")
    _rs_no_trace = True  # a marker: assembly tracing leaves it unwrapped (name/tag look for it)

    def __init__(self, source: Flowable[T], stage_name: str, tags: metrics.Tags) -> None:
        self._source = source
        self.stage_name = stage_name
        self.tags = tags

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        stage = metrics.get_registry().stage(self.stage_name, self.tags)
        batches = getattr(subscriber, "on_next_batch", None) is not None
        cls = _MeterBatchSubscriber if batches else _MeterSubscriber
        self._source.subscribe(cls(subscriber, stage))


class _MeterSubscriber(BasicSubscriber[T, T]):
    __slots__ = ("stage", "meter")

    def __init__(self, downstream: Subscriber[T], stage: metrics.StageMetrics) -> None:
        super().__init__(downstream)
        self.stage = stage
        self.meter = stage.start()

    def on_subscribe(self, subscription: Subscription) -> None:
        meter = self.meter
        meter.thread = threading.current_thread().name
        if queued_of(subscription) is not None:
            meter.queued = lambda: queued_of(subscription)
        super().on_subscribe(subscription)

    def on_next(self, item: T) -> None:
        self.meter.emitted += 1  # single writer: on_next is serial (rule 1.3)
        self.downstream.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if not self.done:
            self.meter.failed = 1
            self.meter.thread = threading.current_thread().name
            self.stage.end(self.meter)
        super().on_error(error)

    def on_complete(self) -> None:
        if not self.done:
            self.meter.completed = 1
            self.meter.thread = threading.current_thread().name
            self.stage.end(self.meter)
        super().on_complete()

    def request(self, n: int) -> None:
        if type(n) is int and n > 0:  # a bad request is the upstream's to signal (rule 3.9)
            self.meter.requested = add_cap(self.meter.requested, n)  # single writer: rule 2.7
        self.upstream.request(n)

    def cancel(self) -> None:
        meter = self.meter
        if not meter.cancelled and not self.done:
            meter.cancelled = 1
            self.stage.end(meter)
        self.upstream.cancel()


class _MeterBatchSubscriber(_MeterSubscriber[T]):
    """In front of a batch consumer: counts and hands on the library-internal batches."""

    __slots__ = ()

    def on_next_batch(self, items: list[T]) -> None:
        self.meter.emitted += len(items)
        self.downstream.on_next_batch(items)  # type: ignore[attr-defined]

    @property
    def accepts_batches(self) -> bool:
        return bool(getattr(self.downstream, "accepts_batches", True))


def _check(what: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{what} must be a non-empty str, got {value!r}")
    return value


def name(source: Flowable[T], stage_name: str) -> Flowable[T]:
    _check("name()", stage_name)
    if isinstance(source, _NamedFlowable):
        return _NamedFlowable(source._source, stage_name, source.tags)
    return _NamedFlowable(source, stage_name, ())


def tag(source: Flowable[T], key: str, value: str) -> Flowable[T]:
    _check("tag(): the key", key)
    _check("tag(): the value", value)
    if isinstance(source, _NamedFlowable):
        tags = tuple(sorted({**dict(source.tags), key: value}.items()))
        return _NamedFlowable(source._source, source.stage_name, tags)
    return _NamedFlowable(source, "unnamed", ((key, value),))
