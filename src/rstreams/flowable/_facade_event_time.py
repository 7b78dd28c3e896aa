"""Facade methods of Flowable for event-time windows (tumbling, sliding, session; watermark, allowed lateness, keys) (a mixin of :class:`Flowable`).

Methods here follow the same rules as ``_flowable.py``: thin, calling their operator module
through ``lazy_function`` (imported on first use), each with a docstring holding a small example
and "Backpressure:"/"Scheduler:" notes. The model (windows, watermark, late elements, the two
aggregation paths, the bounds) is described once, in ``operators/_event_time_window.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from ._lazy import lazy_function

if TYPE_CHECKING:
    from .._spec import Publisher
    from ..schedulers import Scheduler
    from ._flowable import Flowable
    from .operators._event_time_window import AggregateSpec, LateSpec, Window
    from .operators._event_time_window import event_time_window as _i_event_time_window
else:
    _i_event_time_window = lazy_function(".operators._event_time_window", "event_time_window", "_i_event_time_window",
                                         globals())

__all__ = ["EventTimeMixin"]

T = TypeVar("T")


def _f(mixin: EventTimeMixin[T]) -> Flowable[T]:
    """The mixin is always a Flowable at run time (typing helper)."""
    return cast("Flowable[T]", mixin)


class EventTimeMixin(Generic[T]):
    __slots__ = ()

    def tumbling_window(
        self,
        size: float,
        *,
        timestamp: Callable[[T], float],
        key: Callable[[T], Hashable] | None = None,
        allowed_lateness: float = 0.0,
        late: LateSpec = None,
        aggregate: AggregateSpec = None,
        process: Callable[[Flowable[T]], Publisher[Any]] | None = None,
        idle_timeout: float | None = None,
        scheduler: Scheduler | None = None,
        prefetch: int = 1024,
        early_every: int | None = None,
        early_interval: float | None = None,
    ) -> Flowable[Window[Any, Any]]:
        """Group elements into fixed windows ``[i*size, (i+1)*size)`` of their *event time*
        (``timestamp(x)``, seconds), per ``key`` if given; emit one ``Window(key, start, end, value)``
        per window and key when the watermark (latest event time seen minus ``allowed_lateness``)
        passes the window's end, and all open windows at completion.

        ``aggregate``: ``"count"``, ``"sum"``, ``"min"``, ``"max"``, ``"list"`` (default), a reducer
        ``f(acc, x)``, ``(zero, add)`` or an ``Aggregator``; or ``process=lambda w: w.reduce(...)``
        to reduce the window's elements as a Flowable. ``late``: what to do with an element whose
        window already ended at the watermark: a callable or Processor receives it, ``"drop"``
        drops it, the default ``"error"`` fails with ``LateElementError``. ``idle_timeout``: while
        no element arrives, advance the watermark by that much every ``idle_timeout`` seconds of
        ``scheduler`` time. Unlike RxJava's ``window(time)`` (processing time, emits Flowables),
        windows here follow the elements' own timestamps, as Beam's ``FixedWindows`` and Flink's
        ``TumblingEventTimeWindows``.

        Example::

            events = [("a", 1.0), ("b", 2.0), ("a", 4.0), ("a", 12.0), ("b", 3.0), ("a", 25.0)]
            Flowable.from_iterable(events).tumbling_window(
                10, timestamp=lambda e: e[1], key=lambda e: e[0], allowed_lateness=10, aggregate="count"
            ).map(lambda w: (w.key, w.start, w.value)).test().assert_result(
                ("a", 0.0, 2), ("b", 0.0, 2), ("a", 10.0, 1), ("a", 20.0, 1))

        Backpressure: requests the upstream ``prefetch`` elements at a time and only while fewer
        than ``prefetch`` fired windows wait for demand; fired windows are queued, never dropped.
        Scheduler: none unless ``idle_timeout`` is given: then a worker of ``scheduler`` (default:
        computation) runs the idle timer and may emit windows on its thread.
        """
        return _i_event_time_window(
            _f(self), "tumbling_window", size=size, timestamp=timestamp, key=key, allowed_lateness=allowed_lateness,
            late=late, aggregate=aggregate, process=process, idle_timeout=idle_timeout, scheduler=scheduler,
            prefetch=prefetch, early_every=early_every, early_interval=early_interval,
        )

    def sliding_window(
        self,
        size: float,
        slide: float,
        *,
        timestamp: Callable[[T], float],
        key: Callable[[T], Hashable] | None = None,
        allowed_lateness: float = 0.0,
        late: LateSpec = None,
        aggregate: AggregateSpec = None,
        process: Callable[[Flowable[T]], Publisher[Any]] | None = None,
        idle_timeout: float | None = None,
        scheduler: Scheduler | None = None,
        prefetch: int = 1024,
        early_every: int | None = None,
        early_interval: float | None = None,
    ) -> Flowable[Window[Any, Any]]:
        """Group elements into overlapping windows ``[i*slide, i*slide + size)`` of their event
        time (``0 < slide <= size``: each element is in about ``size / slide`` windows), per ``key``
        if given; otherwise as :meth:`tumbling_window` (watermark, ``late``, ``aggregate`` or
        ``process``). An element late for some of its windows is counted in the open ones and
        passed to ``late`` once. Beam's ``SlidingWindows``, Flink's ``SlidingEventTimeWindows``.

        Example::

            Flowable.from_iterable([1.0, 6.0, 11.0]).sliding_window(
                10, 5, timestamp=lambda t: t, aggregate="count"
            ).map(lambda w: (w.start, w.end, w.value)).test().assert_result(
                (-5.0, 5.0, 1), (0.0, 10.0, 2), (5.0, 15.0, 2), (10.0, 20.0, 1))

        Backpressure: as :meth:`tumbling_window`: ``prefetch`` elements at a time, paused while
        ``prefetch`` fired windows wait for demand.
        Scheduler: none unless ``idle_timeout`` is given: then a worker of ``scheduler`` (default:
        computation) runs the idle timer.
        """
        return _i_event_time_window(
            _f(self), "sliding_window", size=size, slide=slide, timestamp=timestamp, key=key,
            allowed_lateness=allowed_lateness, late=late, aggregate=aggregate, process=process,
            idle_timeout=idle_timeout, scheduler=scheduler, prefetch=prefetch, early_every=early_every,
            early_interval=early_interval,
        )

    def session_window(
        self,
        gap: float,
        *,
        timestamp: Callable[[T], float],
        key: Callable[[T], Hashable] | None = None,
        allowed_lateness: float = 0.0,
        late: LateSpec = None,
        aggregate: AggregateSpec = None,
        process: Callable[[Flowable[T]], Publisher[Any]] | None = None,
        idle_timeout: float | None = None,
        scheduler: Scheduler | None = None,
        prefetch: int = 1024,
        early_every: int | None = None,
        early_interval: float | None = None,
    ) -> Flowable[Window[Any, Any]]:
        """Group the elements of each ``key`` into sessions: elements less than ``gap`` seconds
        apart (event time) share a window ``[first, last + gap)``; an element that bridges two
        sessions merges them. A session fires when the watermark reaches its end; otherwise as
        :meth:`tumbling_window`. A custom ``Aggregator`` needs ``merge`` (the built-ins and
        reducers have one). Beam's ``Sessions``, Flink's ``EventTimeSessionWindows``.

        Example::

            clicks = [("u", 0.0), ("u", 3.0), ("u", 20.0), ("v", 1.0)]
            Flowable.from_iterable(clicks).session_window(
                5, timestamp=lambda c: c[1], key=lambda c: c[0], allowed_lateness=20, aggregate="count"
            ).map(lambda w: (w.key, w.start, w.end, w.value)).test().assert_result(
                ("v", 1.0, 6.0, 1), ("u", 0.0, 8.0, 2), ("u", 20.0, 25.0, 1))

        Backpressure: as :meth:`tumbling_window`: ``prefetch`` elements at a time, paused while
        ``prefetch`` fired windows wait for demand.
        Scheduler: none unless ``idle_timeout`` is given: then a worker of ``scheduler`` (default:
        computation) runs the idle timer.
        """
        return _i_event_time_window(
            _f(self), "session_window", gap=gap, timestamp=timestamp, key=key, allowed_lateness=allowed_lateness,
            late=late, aggregate=aggregate, process=process, idle_timeout=idle_timeout, scheduler=scheduler,
            prefetch=prefetch, early_every=early_every, early_interval=early_interval,
        )
