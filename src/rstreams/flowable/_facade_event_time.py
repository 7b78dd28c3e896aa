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

        Early results (with ``aggregate=``; ``process=`` sees a window only once it is complete,
        so it refuses them): ``early_every=n`` emits a window's value so far each time ``n`` more
        elements of that window and key arrived (Beam's ``AfterPane.elementCountAtLeast(n)``
        repeated as early firings, Flink's ``CountTrigger``); ``early_interval=s`` emits, every
        ``s`` seconds of ``scheduler`` time, the value so far of every window and key that
        received elements since its last result (Spark's update output mode with a
        processing-time trigger, Flink's ``ContinuousProcessingTimeTrigger``; Beam's
        ``AfterProcessingTime`` counts from a pane's first element instead). Both may be given.
        Early results accumulate (each covers everything so far: Beam's accumulating mode) and
        have ``w.final == False``; the on-time result still comes exactly once per window and
        key, ``w.final == True``, even when nothing changed since the last early one. An element
        that moves the watermark past some windows and triggers an early result gets the on-time
        results first. ``Window`` keeps its four fields: ``final`` is a property, so an early and
        a final result with the same fields compare equal. Marble style (``early_every=2``,
        count, ``size=10``; ``*`` marks an early result, ``(start, value)``)::

            events (t):  1   2        4   12      13       25        |
            results:         (0,2)*       (0,3)   (10,2)*  (10,2)    (20,1)|

        Example::

            events = [("a", 1.0), ("b", 2.0), ("a", 4.0), ("a", 12.0), ("b", 3.0), ("a", 25.0)]
            Flowable.from_iterable(events).tumbling_window(
                10, timestamp=lambda e: e[1], key=lambda e: e[0], allowed_lateness=10, aggregate="count"
            ).map(lambda w: (w.key, w.start, w.value)).test().assert_result(
                ("a", 0.0, 2), ("b", 0.0, 2), ("a", 10.0, 1), ("a", 20.0, 1))
            Flowable.from_iterable([1, 2, 4, 12, 13, 25]).tumbling_window(
                10, timestamp=float, aggregate="count", early_every=2
            ).map(lambda w: (w.start, w.value, w.final)).test().assert_result(
                (0.0, 2, False), (0.0, 3, True), (10.0, 2, False), (10.0, 2, True), (20.0, 1, True))

        Backpressure: requests the upstream ``prefetch`` elements at a time and only while fewer
        than ``prefetch`` fired windows wait for demand; fired windows are queued, never dropped.
        Early results are elements like the others: they wait for demand in order and count
        toward that limit, so a slow consumer slows the upstream rather than losing an update
        (none is dropped or merged; at most ``prefetch`` results plus what one batch fired wait).
        Scheduler: none unless ``idle_timeout`` or ``early_interval`` is given: then a worker of
        ``scheduler`` (default: computation) runs the timers and may emit windows on its thread.
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
        ``process``, early results). An element late for some of its windows is counted in the
        open ones and passed to ``late`` once; an element that triggers early results in several
        windows gives them in order of end. Beam's ``SlidingWindows``, Flink's
        ``SlidingEventTimeWindows``.

        Example::

            Flowable.from_iterable([1.0, 6.0, 11.0]).sliding_window(
                10, 5, timestamp=lambda t: t, aggregate="count"
            ).map(lambda w: (w.start, w.end, w.value)).test().assert_result(
                (-5.0, 5.0, 1), (0.0, 10.0, 2), (5.0, 15.0, 2), (10.0, 20.0, 1))

        Backpressure: as :meth:`tumbling_window`: ``prefetch`` elements at a time, paused while
        ``prefetch`` fired windows (early ones included) wait for demand.
        Scheduler: none unless ``idle_timeout`` or ``early_interval`` is given: then a worker of
        ``scheduler`` (default: computation) runs the timers.
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
        reducers have one). Beam's ``Sessions``, Flink's ``EventTimeSessionWindows``. An early
        result carries the session's bounds so far: a later result of the same session may start
        earlier or end later; when an element merges sessions, the merged session's element count
        toward ``early_every`` is the sum of its parts' (plus that element), and its results
        cover them all (the merged-away sessions have no result of their own after that).

        Example::

            clicks = [("u", 0.0), ("u", 3.0), ("u", 20.0), ("v", 1.0)]
            Flowable.from_iterable(clicks).session_window(
                5, timestamp=lambda c: c[1], key=lambda c: c[0], allowed_lateness=20, aggregate="count"
            ).map(lambda w: (w.key, w.start, w.end, w.value)).test().assert_result(
                ("v", 1.0, 6.0, 1), ("u", 0.0, 8.0, 2), ("u", 20.0, 25.0, 1))

        Backpressure: as :meth:`tumbling_window`: ``prefetch`` elements at a time, paused while
        ``prefetch`` fired windows (early ones included) wait for demand.
        Scheduler: none unless ``idle_timeout`` or ``early_interval`` is given: then a worker of
        ``scheduler`` (default: computation) runs the timers.
        """
        return _i_event_time_window(
            _f(self), "session_window", gap=gap, timestamp=timestamp, key=key, allowed_lateness=allowed_lateness,
            late=late, aggregate=aggregate, process=process, idle_timeout=idle_timeout, scheduler=scheduler,
            prefetch=prefetch, early_every=early_every, early_interval=early_interval,
        )
