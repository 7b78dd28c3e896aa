"""Facade methods of Flowable for sorting, sets, multimaps, arithmetic aggregates, single-element checks and the blocking samplers (a mixin of :class:`Flowable`).

Methods here follow the same rules as ``_flowable.py``: thin, calling their operator module
through ``lazy_function`` (imported on first use), each with a docstring holding a small example
and "Backpressure:"/"Scheduler:" notes.

The single-valued ones (``to_sorted_list``, ``to_set``, ``to_multimap``, ``sum``, ``min``,
``max``, ``average``, ``single``...) are aggregates built like ``to_list``/``reduce``: they consume
the upstream unbounded, fold a fused synchronous chain (or a boundary's batch) in C-speed chunks,
and hold their one result until it is requested.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

from .._internal.requests import DEFAULT_PREFETCH
from ._enums import NOTSET
from ._lazy import lazy_function

if TYPE_CHECKING:
    from .._spec import Publisher
    from ._flowable import Flowable
    from .operators._blocking_samplers import BlockingSampler

# Operator implementations, imported on first use (``import rstreams`` stays light).
if TYPE_CHECKING:
    from .operators._blocking_samplers import blocking_latest as _i_blocking_latest
    from .operators._blocking_samplers import blocking_most_recent as _i_blocking_most_recent
    from .operators._blocking_samplers import blocking_next as _i_blocking_next
    from .operators._element_at import first as _i_first
    from .operators._element_at import last as _i_last
    from .operators._math import average as _i_average
    from .operators._math import max_ as _i_max
    from .operators._math import min_ as _i_min
    from .operators._math import sum_ as _i_sum
    from .operators._sequence_equal import sequence_equal as _i_sequence_equal
    from .operators._single import single as _i_single
    from .operators._single import single_or_error as _i_single_or_error
    from .operators._sorted import sorted_ as _i_sorted
    from .operators._sorted import to_sorted_list as _i_to_sorted_list
    from .operators._to_multimap import to_multimap as _i_to_multimap
    from .operators._to_set import to_set as _i_to_set
else:
    _i_average = lazy_function(".operators._math", "average", "_i_average", globals())
    _i_blocking_latest = lazy_function(".operators._blocking_samplers", "blocking_latest", "_i_blocking_latest", globals())
    _i_blocking_most_recent = lazy_function(
        ".operators._blocking_samplers", "blocking_most_recent", "_i_blocking_most_recent", globals()
    )
    _i_blocking_next = lazy_function(".operators._blocking_samplers", "blocking_next", "_i_blocking_next", globals())
    _i_first = lazy_function(".operators._element_at", "first", "_i_first", globals())
    _i_last = lazy_function(".operators._element_at", "last", "_i_last", globals())
    _i_max = lazy_function(".operators._math", "max_", "_i_max", globals())
    _i_min = lazy_function(".operators._math", "min_", "_i_min", globals())
    _i_sequence_equal = lazy_function(".operators._sequence_equal", "sequence_equal", "_i_sequence_equal", globals())
    _i_single = lazy_function(".operators._single", "single", "_i_single", globals())
    _i_single_or_error = lazy_function(".operators._single", "single_or_error", "_i_single_or_error", globals())
    _i_sorted = lazy_function(".operators._sorted", "sorted_", "_i_sorted", globals())
    _i_sum = lazy_function(".operators._math", "sum_", "_i_sum", globals())
    _i_to_multimap = lazy_function(".operators._to_multimap", "to_multimap", "_i_to_multimap", globals())
    _i_to_set = lazy_function(".operators._to_set", "to_set", "_i_to_set", globals())
    _i_to_sorted_list = lazy_function(".operators._sorted", "to_sorted_list", "_i_to_sorted_list", globals())

__all__ = ["AggregateMixin"]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
E = TypeVar("E")

def _f(mixin: AggregateMixin[T]) -> Flowable[T]:
    """The mixin is always a Flowable at run time (typing helper)."""
    return cast("Flowable[T]", mixin)


class AggregateMixin(Generic[T]):
    __slots__ = ()

    # ------------------------------------------------------------------------------------------
    # Sorting, sets and multimaps

    def to_sorted_list(self, key: Callable[[T], Any] | None = None, reverse: bool = False) -> Flowable[list[T]]:
        """Collect every element into one list sorted by ``key`` (default: the elements themselves),
        emitted on completion (RxJava ``toSortedList``). The sort is stable; ``reverse=True`` sorts
        descending. Python sorts by key where RxJava takes a comparator: wrap one with
        ``functools.cmp_to_key``. A raising ``key`` (or elements that cannot be compared) ends the
        stream with that error.

        Example::

            Flowable.just(3, 1, 2).to_sorted_list().test().assert_result([1, 2, 3])
            Flowable.just("bb", "a").to_sorted_list(key=len).test().assert_result(["a", "bb"])

        Backpressure: consumes the upstream unbounded; the one result waits for a request.
        Scheduler: none; ``key`` runs, and the result goes out, on the thread of the upstream's
        completion (or on the requesting thread if the request comes later).
        """
        return _i_to_sorted_list(_f(self), key, reverse)

    def sorted(self, key: Callable[[T], Any] | None = None, reverse: bool = False) -> Flowable[T]:
        """Emit every element in sorted order once the upstream completes (RxJava ``sorted``:
        ``to_sorted_list`` flattened). Stable; ``key`` and ``reverse`` as :meth:`to_sorted_list`.

        Example::

            Flowable.just(3, 1, 2).sorted().test().assert_result(1, 2, 3)
            Flowable.just(3, 1, 2).sorted(reverse=True).test().assert_result(3, 2, 1)

        Backpressure: consumes the upstream unbounded (every element is held until completion),
        then emits the sorted elements as the downstream requests them.
        Scheduler: none; the elements go out on the thread of the upstream's completion, or on the
        requesting thread for later requests.
        """
        return _i_sorted(_f(self), key, reverse)

    def to_set(self) -> Flowable[set[T]]:
        """Collect the distinct elements into one ``set``, emitted on completion (RxJava
        ``collect(HashSet::new, Set::add)``). An unhashable element ends the stream with
        ``TypeError`` (the upstream is cancelled).

        Example::

            Flowable.just(1, 2, 1).to_set().test().assert_result({1, 2})

        Backpressure: consumes the upstream unbounded; the one result waits for a request.
        Scheduler: none; the result goes out on the thread of the upstream's completion, or on the
        requesting thread if the request comes later.
        """
        return _i_to_set(_f(self))

    @overload
    def to_multimap(self, key_selector: Callable[[T], K], value_selector: None = None) -> Flowable[dict[K, list[T]]]: ...

    @overload
    def to_multimap(self, key_selector: Callable[[T], K], value_selector: Callable[[T], V]) -> Flowable[dict[K, list[V]]]: ...

    def to_multimap(
        self, key_selector: Callable[[T], K], value_selector: Callable[[T], V] | None = None
    ) -> Flowable[dict[K, list[Any]]]:
        """Collect into a dict of ``key_selector(x)`` -> list of ``value_selector(x)`` (default: the
        elements), in arrival order, emitted on completion (RxJava ``toMultimap``). The key selector
        runs before the value selector; a value selector returning ``None`` ends the stream with
        ``NoneElementError``.

        Example::

            Flowable.just("a", "bb", "c").to_multimap(len).test().assert_result({1: ["a", "c"], 2: ["bb"]})

        Backpressure: consumes the upstream unbounded; the one result waits for a request.
        Scheduler: none; the selectors run on the upstream's thread; the result goes out on the thread
        of the upstream's completion, or on the requesting thread if the request comes later.
        """
        return _i_to_multimap(_f(self), key_selector, value_selector)

    # ------------------------------------------------------------------------------------------
    # Arithmetic aggregates

    def sum(self) -> Flowable[T | int]:
        """Emit the sum of the elements (``0 + x1 + x2 + ...`` with ``+``), on completion
        (RxJavaExtensions' ``MathFlowable.sum*``, Reactor's ``MathFlux.sum*``). An empty stream
        emits ``0`` (as Python's ``sum`` and ``MathFlux``). Floats are added left to right, the same
        fused or not. A non-numeric element ends the stream with ``TypeError``.

        Example::

            Flowable.range(1, 4).sum().test().assert_result(10)
            Flowable.empty().sum().test().assert_result(0)

        Backpressure: consumes the upstream unbounded; the one result waits for a request.
        Scheduler: none; the result goes out on the thread of the upstream's completion, or on the
        requesting thread if the request comes later.
        """
        return _i_sum(_f(self))

    def min(self, key: Callable[[T], Any] | None = None) -> Flowable[T]:
        """Emit the least element (by ``key(element)`` when given; of equal ones the first), on
        completion (``MathFlowable.min``). An empty stream completes empty, as RxJava's ``reduce``
        without a seed (use ``default_if_empty`` or ``single_or_error`` for a value or an error).

        Example::

            Flowable.just(3, 1, 2).min().test().assert_result(1)
            Flowable.just("bb", "a", "c").min(key=len).test().assert_result("a")

        Backpressure: consumes the upstream unbounded; the one result waits for a request.
        Scheduler: none; ``key`` runs on the upstream's thread; the result goes out on the thread of
        the upstream's completion, or on the requesting thread if the request comes later.
        """
        return _i_min(_f(self), key)

    def max(self, key: Callable[[T], Any] | None = None) -> Flowable[T]:
        """Emit the greatest element (by ``key(element)`` when given; of equal ones the first), on
        completion (``MathFlowable.max``). An empty stream completes empty, as :meth:`min`.

        Example::

            Flowable.just(3, 1, 2).max().test().assert_result(3)
            Flowable.just("bb", "a", "cc").max(key=len).test().assert_result("bb")

        Backpressure: consumes the upstream unbounded; the one result waits for a request.
        Scheduler: none; ``key`` runs on the upstream's thread; the result goes out on the thread of
        the upstream's completion, or on the requesting thread if the request comes later.
        """
        return _i_max(_f(self), key)

    def average(self) -> Flowable[Any]:
        """Emit the mean of the elements, ``sum / count`` with true division (a ``float`` for ints;
        ``Decimal`` and ``Fraction`` keep their type), on completion (``MathFlowable.averageDouble``).
        An empty stream completes empty, as :meth:`min`.

        Example::

            Flowable.just(1, 2, 3, 4).average().test().assert_result(2.5)

        Backpressure: consumes the upstream unbounded; the one result waits for a request.
        Scheduler: none; the result goes out on the thread of the upstream's completion, or on the
        requesting thread if the request comes later.
        """
        return _i_average(_f(self))

    # ------------------------------------------------------------------------------------------
    # Comparing sequences

    @staticmethod
    def sequence_equal(
        a: Publisher[E], b: Publisher[E], equal: Callable[[E, E], object] | None = None, prefetch: int = DEFAULT_PREFETCH
    ) -> Flowable[bool]:
        """Emit one ``bool``: whether ``a`` and ``b`` emit equal elements pairwise, in order, and the
        same number of them (RxJava ``sequenceEqual``). ``equal(x, y)`` decides (default: ``x is y or
        x == y``). The answer is given as soon as it is known (the first differing pair, or one
        sequence ending before the other), and both sources are then cancelled. An error of either
        source, or of ``equal``, cancels both and is signalled instead.

        Example::

            Flowable.sequence_equal(Flowable.range(0, 3), Flowable.just(0, 1, 2)).test().assert_result(True)
            Flowable.sequence_equal(Flowable.just(1, 2), Flowable.just(1)).test().assert_result(False)

        Backpressure: requests ``prefetch`` from each source, then replenishes what was compared once
        at least ``prefetch - prefetch // 4`` pairs were: at most ``prefetch`` elements of each wait in
        memory. The answer waits for a request.
        Scheduler: none; ``equal`` runs on the thread of whichever source's signal completed a pair; the
        answer goes out on the thread that decided it, or on the requesting thread if the request comes
        later.
        """
        return _i_sequence_equal(a, b, equal, prefetch)

    # ------------------------------------------------------------------------------------------
    # Single elements

    def single(self, default: T) -> Flowable[T]:
        """Emit the only element; ``default`` if the stream is empty; signal ``ValueError`` if there
        is a second element (the upstream is cancelled there) (RxJava ``single(defaultItem)``).

        Example::

            Flowable.just(7).single(0).test().assert_result(7)
            Flowable.empty().single(0).test().assert_result(0)
            Flowable.just(1, 2).single(0).test().assert_error(ValueError)

        Backpressure: asks the upstream for at most two elements (the second proves there is more than
        one); the result waits for a request.
        Scheduler: none; the result goes out on the thread of the upstream's completion (or of the
        second element), or on the requesting thread if the request comes later.
        """
        return _i_single(_f(self), default)

    def single_or_error(self) -> Flowable[T]:
        """Emit the only element; signal ``NoSuchElementError`` if the stream is empty, ``ValueError``
        if there is a second element (the upstream is cancelled there) (RxJava ``singleOrError``).

        Example::

            Flowable.just(7).single_or_error().test().assert_result(7)
            Flowable.empty().single_or_error().test().assert_error(NoSuchElementError)

        Backpressure: asks the upstream for at most two elements (the second proves there is more than
        one); the result waits for a request.
        Scheduler: none; the result goes out on the thread of the upstream's completion (or of the
        second element), or on the requesting thread if the request comes later.
        """
        return _i_single_or_error(_f(self))

    def first_or_error(self) -> Flowable[T]:
        """Emit the first element, then cancel the upstream; signal ``NoSuchElementError`` if the
        stream is empty (RxJava ``firstOrError``; the same as :meth:`first` without a default).

        Example::

            Flowable.range(3, 5).first_or_error().test().assert_result(3)
            Flowable.empty().first_or_error().test().assert_error(NoSuchElementError)

        Backpressure: consumes the upstream unbounded and cancels it at the first element; the element
        waits for a request.
        Scheduler: none; the element goes out on the upstream's thread, or on the requesting thread if
        the request comes later.
        """
        return _i_first(_f(self), NOTSET, "first_or_error")

    def last_or_error(self) -> Flowable[T]:
        """Emit the last element on completion; signal ``NoSuchElementError`` if the stream is empty
        (RxJava ``lastOrError``; the same as :meth:`last` without a default).

        Example::

            Flowable.range(3, 5).last_or_error().test().assert_result(7)
            Flowable.empty().last_or_error().test().assert_error(NoSuchElementError)

        Backpressure: consumes the upstream unbounded; the element waits for a request.
        Scheduler: none; the element goes out on the thread of the upstream's completion, or on the
        requesting thread if the request comes later.
        """
        return _i_last(_f(self), NOTSET, "last_or_error")

    # ------------------------------------------------------------------------------------------
    # Blocking samplers

    def blocking_latest(self) -> BlockingSampler[T]:
        """An iterator whose ``next()`` returns the latest element not returned yet, blocking until
        there is one (RxJava ``blockingLatest``); elements that arrive between two calls are replaced
        by later ones. It subscribes at once. A completion ends the iteration after the last element
        not taken yet (RxJava drops that element: a departure); an error is raised from ``next()``.
        ``close()``, ``break``, the ``with`` block or garbage collection cancel the upstream; an
        interrupt while waiting (``KeyboardInterrupt``) cancels it too, and propagates.

        Example::

            with Flowable.interval(0.1).blocking_latest() as it:
                for tick in it:
                    slow_work(tick)        # ticks that arrive meanwhile are skipped

        Backpressure: none: requests unbounded and keeps only the latest element (as RxJava), so the
        source is never slowed and memory stays O(1).
        Scheduler: none of its own; ``next()`` blocks the iterating thread; the upstream runs on its
        own threads (a synchronous one runs to its end inside this call).
        """
        return _i_blocking_latest(_f(self))

    def blocking_next(self) -> BlockingSampler[T]:
        """An iterator whose ``next()`` blocks until the upstream emits an element *after* the call
        began, and returns it (RxJava ``blockingNext``); elements emitted while nobody waits are
        dropped. It subscribes at the first ``next()``. A completion ends the iteration (an element
        already handed to a waiting ``next()`` is returned first; RxJava may drop it: a departure);
        an error is raised from ``next()``. ``close()``, ``break``, the ``with`` block or garbage
        collection cancel the upstream; an interrupt while waiting cancels it too, and propagates.

        Example::

            for reading in sensor.blocking_next():
                show(reading)              # readings emitted while show() runs are dropped

        Backpressure: none: requests unbounded and drops the elements nobody waits for (as RxJava).
        Scheduler: none of its own; ``next()`` blocks the iterating thread; the upstream runs on its
        own threads (a synchronous one runs to its end inside the first ``next()``).
        """
        return _i_blocking_next(_f(self))

    def blocking_most_recent(self, initial: T) -> BlockingSampler[T]:
        """An iterator whose ``next()`` returns, without blocking, the most recent element
        (``initial`` before the first) (RxJava ``blockingMostRecent``). It subscribes at once; the
        iteration ends as soon as the stream completes (a synchronous source completes inside this
        call, so it yields nothing, as in RxJava); an error is raised from ``next()``. ``close()``,
        ``break``, the ``with`` block or garbage collection cancel the upstream.

        Example::

            for temperature in readings.blocking_most_recent(20.0):
                thermostat.adjust(temperature)    # polls; never waits for the stream

        Backpressure: none: requests unbounded and keeps only the most recent element (as RxJava).
        Scheduler: none of its own; ``next()`` runs on the iterating thread and never blocks; the
        upstream runs on its own threads (a synchronous one runs to its end inside this call).
        """
        return _i_blocking_most_recent(_f(self), initial)
