"""Facade methods of Flowable for the time operators (a mixin of :class:`Flowable`).

Methods here follow the same rules as ``_flowable.py``: thin, lazily importing their operator
module, each with a docstring holding a small example and "Backpressure:"/"Scheduler:" notes.

Every time operator takes an optional ``scheduler`` (default: ``schedulers.computation()``); in
tests pass a :class:`~rstreams.testing.TestScheduler` and move its virtual clock. Durations are in
seconds (int or float). Cancelling a subscription disposes the operator's worker: no timer or thread
is left behind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

from ._lazy import lazy_function

if TYPE_CHECKING:
    from .._spec import Publisher
    from ..schedulers import Scheduler
    from ._flowable import Flowable
    from .operators._time_timestamp import Timed

# Operator implementations, imported on first use (``import rstreams`` stays light). A
# ``from ... import`` statement inside each method cost ~2 us per call on CPython 3.11 (a
# failed ``__path__`` lookup formats an AttributeError every time): more than building most
# operators, and paid per element by code that assembles inner Flowables in flat_map.
if TYPE_CHECKING:
    from .operators._buffer_timed import buffer_timed as _i_buffer_timed
    from .operators._time_delay import delay as _i_delay
    from .operators._time_delay import delay_subscription as _i_delay_subscription
    from .operators._time_sources import interval as _i_interval
    from .operators._time_sources import timer as _i_timer
    from .operators._time_take_skip import skip_for as _i_skip_for
    from .operators._time_take_skip import take_for as _i_take_for
    from .operators._time_throttle import debounce as _i_debounce
    from .operators._time_throttle import sample as _i_sample
    from .operators._time_throttle import throttle_first as _i_throttle_first
    from .operators._time_throttle import throttle_latest as _i_throttle_latest
    from .operators._time_timeout import timeout as _i_timeout
    from .operators._time_timeout import timeout_selector as _i_timeout_selector
    from .operators._time_timestamp import time_interval as _i_time_interval
    from .operators._time_timestamp import timestamp as _i_timestamp
    from .operators._window import window_timed as _i_window_timed
else:
    _i_buffer_timed = lazy_function(".operators._buffer_timed", "buffer_timed", "_i_buffer_timed", globals())
    _i_debounce = lazy_function(".operators._time_throttle", "debounce", "_i_debounce", globals())
    _i_delay = lazy_function(".operators._time_delay", "delay", "_i_delay", globals())
    _i_delay_subscription = lazy_function(".operators._time_delay", "delay_subscription", "_i_delay_subscription", globals())
    _i_interval = lazy_function(".operators._time_sources", "interval", "_i_interval", globals())
    _i_sample = lazy_function(".operators._time_throttle", "sample", "_i_sample", globals())
    _i_skip_for = lazy_function(".operators._time_take_skip", "skip_for", "_i_skip_for", globals())
    _i_take_for = lazy_function(".operators._time_take_skip", "take_for", "_i_take_for", globals())
    _i_throttle_first = lazy_function(".operators._time_throttle", "throttle_first", "_i_throttle_first", globals())
    _i_throttle_latest = lazy_function(".operators._time_throttle", "throttle_latest", "_i_throttle_latest", globals())
    _i_time_interval = lazy_function(".operators._time_timestamp", "time_interval", "_i_time_interval", globals())
    _i_timeout = lazy_function(".operators._time_timeout", "timeout", "_i_timeout", globals())
    _i_timeout_selector = lazy_function(".operators._time_timeout", "timeout_selector", "_i_timeout_selector", globals())
    _i_timer = lazy_function(".operators._time_sources", "timer", "_i_timer", globals())
    _i_timestamp = lazy_function(".operators._time_timestamp", "timestamp", "_i_timestamp", globals())
    _i_window_timed = lazy_function(".operators._window", "window_timed", "_i_window_timed", globals())


__all__ = ["TimeOperatorsMixin"]

T = TypeVar("T")


def _f(mixin: TimeOperatorsMixin[T]) -> Flowable[T]:
    """The mixin is always a Flowable at run time (typing helper)."""
    return cast("Flowable[T]", mixin)


class TimeOperatorsMixin(Generic[T]):
    __slots__ = ()

    # ------------------------------------------------------------------------------------------
    # Time sources

    @staticmethod
    def interval(
        period: float, initial_delay: float | None = None, scheduler: Scheduler | None = None
    ) -> Flowable[int]:
        """Emit 0, 1, 2, ... every ``period`` seconds, the first after ``initial_delay`` (default: ``period``).

        Example::

            ts = TestScheduler()
            sub = Flowable.interval(1.0, scheduler=ts).take(3).test()
            ts.advance_by(3); sub.assert_result(0, 1, 2)

        Backpressure: none possible (time cannot be slowed down). At a tick with no outstanding
        demand it stops and signals ``MissingBackpressureError``; put ``on_backpressure_drop()``,
        ``on_backpressure_latest()`` or ``on_backpressure_buffer()`` after it for slow consumers.
        Scheduler: ticks are emitted on a worker of ``scheduler`` (default: computation).
        """
        return _i_interval(period, initial_delay, scheduler)

    @staticmethod
    def timer(delay: float, scheduler: Scheduler | None = None) -> Flowable[int]:
        """Emit 0 once after ``delay`` seconds, then complete.

        Example::

            ts = TestScheduler()
            sub = Flowable.timer(2.0, ts).test()
            ts.advance_by(2); sub.assert_result(0)

        Backpressure: if the downstream has not requested when the delay elapses, the 0 waits for
        the first request (nothing is lost, nothing overflows).
        Scheduler: the 0 is emitted on a worker of ``scheduler`` (or on the requesting thread, when
        the request comes after the delay).
        """
        return _i_timer(delay, scheduler)

    # ------------------------------------------------------------------------------------------
    # Shifting in time

    @overload
    def delay(
        self, duration: float, scheduler: Scheduler | None = None, delay_error: bool = False
    ) -> Flowable[T]: ...

    @overload
    def delay(self, selector: Callable[[T], Publisher[Any]], /, *, delay_error: bool = False) -> Flowable[T]: ...

    def delay(
        self,
        duration: float | Callable[[T], Publisher[Any]],
        scheduler: Scheduler | None = None,
        delay_error: bool = False,
    ) -> Flowable[T]:
        """Shift every element and the completion by ``duration`` seconds.

        An error is delivered at once (dropping the elements still delayed) unless ``delay_error``.

        Given a function ``selector`` instead (RxJava's ``delay(Function itemDelayIndicator)``):
        each element waits until ``selector(element)``, a Publisher, signals its first element or
        completes. As RxJava (a flat_map), elements go out in the order their delays end.

        Example::

            ts = TestScheduler()
            sub = Flowable.just(1, 2).delay(1.0, ts).test()
            sub.assert_no_values(); ts.advance_by(1); sub.assert_result(1, 2)
            sub = Flowable.just(2, 1).delay(lambda x: Flowable.timer(x, ts)).test()
            ts.advance_by(2); sub.assert_result(1, 2)

        Backpressure: requests pass straight upstream; nothing is dropped. With a selector, as
        ``flat_map``: at most 128 elements wait for their delays at a time.
        Scheduler: signals are emitted on a worker of ``scheduler``, serially and in order; with a
        selector, on the threads of the delay Publishers.
        """
        return _i_delay(_f(self), duration, scheduler, delay_error)

    def delay_subscription(self, duration: float, scheduler: Scheduler | None = None) -> Flowable[T]:
        """Subscribe to this Flowable only after ``duration`` seconds.

        Example::

            ts = TestScheduler()
            sub = Flowable.just(1).delay_subscription(5, ts).test()
            ts.advance_by(5); sub.assert_result(1)

        Backpressure: requests made before the subscription are remembered and forwarded.
        Scheduler: the source is subscribed on a worker of ``scheduler``.
        """
        return _i_delay_subscription(_f(self), duration, scheduler)

    # ------------------------------------------------------------------------------------------
    # Rate limiting

    @overload
    def debounce(self, duration: float, scheduler: Scheduler | None = None) -> Flowable[T]: ...

    @overload
    def debounce(self, selector: Callable[[T], Publisher[Any]], /) -> Flowable[T]: ...

    def debounce(
        self, duration: float | Callable[[T], Publisher[Any]], scheduler: Scheduler | None = None
    ) -> Flowable[T]:
        """Emit an element only after ``duration`` seconds pass without another element (the last
        pending element is emitted at once on completion).

        Given a function ``selector`` instead (RxJava's ``debounce(Function)``): an element is
        emitted when ``selector(element)``, a Publisher, signals its first element or completes
        before the next element arrives (the next element cancels it).

        Example::

            ts = TestScheduler()
            tp = TestPublisher.create(); sub = Flowable.from_publisher(tp).debounce(1.0, ts).test()
            tp.next(1); ts.advance_by(0.5); tp.next(2); ts.advance_by(1); sub.assert_values(2)
            tp = TestPublisher.create()
            sub = Flowable.from_publisher(tp).debounce(lambda x: Flowable.timer(1.0, ts)).test()
            tp.next(1); ts.advance_by(0.5); tp.next(2); ts.advance_by(1); sub.assert_values(2)

        Backpressure: requests unbounded upstream; if an element is due and the downstream has no
        demand it signals ``MissingBackpressureError``.
        Scheduler: elements are emitted on a worker of ``scheduler`` (with a selector, on the
        thread of the element's Publisher); the last one and the terminal signals on the
        upstream's thread.
        """
        return _i_debounce(_f(self), duration, scheduler)

    @overload
    def sample(
        self, period: float, scheduler: Scheduler | None = None, emit_last: bool = False
    ) -> Flowable[T]: ...

    @overload
    def sample(self, sampler: Publisher[Any], /, *, emit_last: bool = False) -> Flowable[T]: ...

    def sample(
        self, period: float | Publisher[Any], scheduler: Scheduler | None = None, emit_last: bool = False
    ) -> Flowable[T]:
        """Emit the latest element of each ``period`` (if any) at the end of the period; with
        ``emit_last`` also the latest unsampled element at completion. Same as ``throttle_last``.

        Given a Publisher ``sampler`` instead (RxJava's ``sample(Publisher, emitLast)``): emit the
        latest unsampled element at each of its elements; when it completes, the stream completes
        (after the latest element, with ``emit_last``).

        Example::

            ts = TestScheduler()
            tp = TestPublisher.create(); sub = Flowable.from_publisher(tp).sample(1.0, ts).test()
            tp.next(1, 2); ts.advance_by(1); tp.next(3); ts.advance_by(1); sub.assert_values(2, 3)
            tp = TestPublisher.create(); ticks = TestPublisher.create()
            sub = Flowable.from_publisher(tp).sample(ticks, emit_last=True).test()
            tp.next(1, 2); ticks.next(0); tp.next(3); tp.complete(); sub.assert_result(2, 3)

        Backpressure: requests unbounded upstream (and from the sampler); at a tick with an element
        and no downstream demand it signals ``MissingBackpressureError``.
        Scheduler: samples are emitted on a worker of ``scheduler``, or the sampler's thread.
        """
        return _i_sample(_f(self), period, scheduler, emit_last)

    def throttle_last(
        self, period: float, scheduler: Scheduler | None = None, emit_last: bool = False
    ) -> Flowable[T]:
        """Alias of :meth:`sample`: the latest element of each period.

        Example::

            Flowable.interval(0.01).throttle_last(0.1).take(3).blocking_last()

        Backpressure: as ``sample`` (``MissingBackpressureError`` when a sample finds no demand).
        Scheduler: samples are emitted on a worker of ``scheduler``.
        """
        return _i_sample(_f(self), period, scheduler, emit_last, op="throttle_last")

    def throttle_first(self, duration: float, scheduler: Scheduler | None = None) -> Flowable[T]:
        """Emit an element, then drop the elements of the next ``duration`` seconds.

        Example::

            ts = TestScheduler()
            tp = TestPublisher.create(); sub = Flowable.from_publisher(tp).throttle_first(1.0, ts).test()
            tp.next(1, 2); ts.advance_by(1); tp.next(3); sub.assert_values(1, 3)

        Backpressure: requests unbounded upstream; an element that opens a window while the
        downstream has no demand ends the stream with ``MissingBackpressureError``.
        Scheduler: elements are emitted on the upstream's thread; the worker only times the windows.
        """
        return _i_throttle_first(_f(self), duration, scheduler)

    def throttle_latest(
        self, duration: float, scheduler: Scheduler | None = None, emit_last: bool = False
    ) -> Flowable[T]:
        """Emit an element at once, then at most one element (the latest) per ``duration`` seconds;
        with ``emit_last`` the latest pending element is emitted at completion.

        Example::

            ts = TestScheduler()
            tp = TestPublisher.create(); sub = Flowable.from_publisher(tp).throttle_latest(1.0, ts).test()
            tp.next(1, 2, 3); ts.advance_by(1); sub.assert_values(1, 3)

        Backpressure: requests unbounded upstream; an emission without downstream demand ends the
        stream with ``MissingBackpressureError``.
        Scheduler: emits on the upstream's thread (first element) or the worker (window ends).
        """
        return _i_throttle_latest(_f(self), duration, scheduler, emit_last)

    # ------------------------------------------------------------------------------------------
    # Timeouts

    def timeout(
        self, duration: float, fallback: Publisher[T] | None = None, scheduler: Scheduler | None = None
    ) -> Flowable[T]:
        """Fail with ``TimeoutError`` if the first element, or any next element, takes longer than
        ``duration`` seconds; with ``fallback``, switch to it instead.

        Per-element timeouts given as Publishers are :meth:`timeout_selector`.

        Example::

            ts = TestScheduler()
            sub = Flowable.never().timeout(1.0, scheduler=ts).test()
            ts.advance_by(1); sub.assert_error(TimeoutError)
            sub = Flowable.never().timeout(1.0, Flowable.just(9), ts).test()
            ts.advance_by(1); sub.assert_result(9)

        Backpressure: requests pass through; the fallback is asked for the demand the source did
        not fulfil.
        Scheduler: the timer runs on a worker of ``scheduler``; a TimeoutError or the fallback's
        signals come from that worker.
        """
        return _i_timeout(_f(self), duration, fallback, scheduler)

    def timeout_selector(
        self,
        first_timeout: Publisher[Any] | None,
        item_timeout: Callable[[T], Publisher[Any]],
        fallback: Publisher[T] | None = None,
    ) -> Flowable[T]:
        """Time out with Publishers: ``first_timeout`` (None: no timeout) for the first element, then
        ``item_timeout(element)`` for the next one. A timeout Publisher "fires" with its first
        element or its completion; its error fails the stream.

        Example::

            ts = TestScheduler()
            sub = Flowable.never().timeout_selector(Flowable.timer(1.0, ts), lambda x: Flowable.never()).test()
            ts.advance_by(1); sub.assert_error(TimeoutError)

        Backpressure: requests pass through; the fallback is asked for the unfulfilled demand.
        Scheduler: none of its own; signals come from the source or the timeout Publishers.
        """
        return _i_timeout_selector(_f(self), first_timeout, item_timeout, fallback)

    # ------------------------------------------------------------------------------------------
    # Time of elements

    def timestamp(self, scheduler: Scheduler | None = None) -> Flowable[Timed[T]]:
        """Pair every element with ``scheduler.now()``: ``Timed(value, time)``.

        Example::

            ts = TestScheduler(start=10)
            Flowable.just("a").timestamp(ts).test().assert_result(Timed("a", 10.0))

        Backpressure: one-to-one; requests pass through.
        Scheduler: only the clock of ``scheduler`` (default: computation) is read; signals stay on
        the upstream's thread.
        """
        return _i_timestamp(_f(self), scheduler)

    def time_interval(self, scheduler: Scheduler | None = None) -> Flowable[Timed[T]]:
        """Pair every element with the seconds since the previous one (or since the subscription):
        ``Timed(value, interval)``.

        Example::

            ts = TestScheduler()
            Flowable.just("a").time_interval(ts).test().assert_result(Timed("a", 0.0))

        Backpressure: one-to-one; requests pass through.
        Scheduler: only the clock of ``scheduler`` (default: computation) is read; signals stay on
        the upstream's thread.
        """
        return _i_time_interval(_f(self), scheduler)

    def take_for(self, duration: float, scheduler: Scheduler | None = None) -> Flowable[T]:
        """Relay elements for ``duration`` seconds after subscribing, then cancel and complete
        (RxJava's ``take(time, unit)``).

        Example::

            ts = TestScheduler()
            sub = Flowable.interval(1.0, scheduler=ts).take_for(2.5, ts).test()
            ts.advance_by(3); sub.assert_result(0, 1)

        Backpressure: requests pass through.
        Scheduler: the completion comes from a worker of ``scheduler``; elements from the upstream.
        """
        return _i_take_for(_f(self), duration, scheduler)

    def skip_for(self, duration: float, scheduler: Scheduler | None = None) -> Flowable[T]:
        """Drop the elements of the first ``duration`` seconds (RxJava's ``skip(time, unit)``).

        Example::

            ts = TestScheduler()
            sub = Flowable.interval(1.0, scheduler=ts).skip_for(1.5, ts).take(2).test()
            ts.advance_by(3); sub.assert_result(1, 2)

        Backpressure: every dropped element is replaced by ``request(1)`` upstream.
        Scheduler: elements stay on the upstream's thread; the worker only times the window.
        """
        return _i_skip_for(_f(self), duration, scheduler)

    # ------------------------------------------------------------------------------------------
    # Processing-time windows and buffers

    def window_timed(
        self, duration: float, count: int | None = None, scheduler: Scheduler | None = None
    ) -> Flowable[Flowable[T]]:
        """Split into consecutive windows of ``duration`` seconds (and at most ``count`` elements,
        when given: a full window closes early and the timer restarts).

        Example::

            ts = TestScheduler()
            tp = TestPublisher.create()
            sub = Flowable.from_publisher(tp).window_timed(1.0, scheduler=ts).flat_map(lambda w: w.to_list()).test()
            tp.next(1, 2); ts.advance_by(1); tp.next(3); tp.complete(); sub.assert_result([1, 2], [3])

        Backpressure: requests unbounded upstream (time-driven); opening a window when the
        downstream has not requested one signals ``MissingBackpressureError``. Each window buffers
        its elements until its subscriber requests them.
        Scheduler: windows open and close on a worker of ``scheduler``.
        """
        return _i_window_timed(_f(self), duration, count, scheduler)

    def buffer_timed(
        self, duration: float, count: int | None = None, scheduler: Scheduler | None = None
    ) -> Flowable[list[T]]:
        """Collect elements into lists emitted every ``duration`` seconds (possibly empty), or as
        soon as a list holds ``count`` elements (then the timer restarts).

        Example::

            ts = TestScheduler()
            tp = TestPublisher.create()
            sub = Flowable.from_publisher(tp).buffer_timed(1.0, scheduler=ts).test()
            tp.next(1, 2); ts.advance_by(1); tp.next(3); tp.complete(); sub.assert_result([1, 2], [3])

        Backpressure: requests unbounded upstream (time-driven, as RxJava). When a list is due and
        the downstream has no demand, it cancels the upstream and signals
        ``MissingBackpressureError`` (never overflows, never buffers without bound); put
        ``on_backpressure_buffer(n)``/``on_backpressure_drop()`` after it for slow consumers.
        Scheduler: lists are emitted on a worker of ``scheduler`` (timer) or the upstream's thread
        (``count`` reached, completion).
        """
        return _i_buffer_timed(_f(self), duration, count, scheduler)
