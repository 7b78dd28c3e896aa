"""Facade methods of Flowable for combining and flattening variants (delay-error flattening, concat_eager, switch_on_next, end_with, pairwise, zip_with_index, materialize) (a mixin of :class:`Flowable`).

Methods here follow the same rules as ``_flowable.py``: thin, calling their operator module
through ``lazy_function`` (imported on first use), each with a docstring holding a small example
and "Backpressure:"/"Scheduler:" notes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

from .._internal.requests import DEFAULT_PREFETCH
from ._lazy import lazy_function

if TYPE_CHECKING:
    from .._spec import Publisher
    from ._flowable import Flowable
    from .operators._materialize import Notification

# Operator implementations, imported on first use (``import rstreams`` stays light; see
# ``_facade_time.py`` for why not a ``from ... import`` inside each method).
if TYPE_CHECKING:
    from .operators._concat_eager import concat_eager as _i_concat_eager
    from .operators._concat_map import concat_map as _i_concat_map
    from .operators._end_with import end_with as _i_end_with
    from .operators._materialize import dematerialize as _i_dematerialize
    from .operators._materialize import materialize as _i_materialize
    from .operators._merge import merge as _i_merge
    from .operators._pairwise import pairwise as _i_pairwise
    from .operators._publish_selector import publish_selector as _i_publish_selector
    from .operators._switch_map import switch_map as _i_switch_map
    from .operators._switch_on_next import switch_on_next as _i_switch_on_next
    from .operators._zip_with_index import zip_with_index as _i_zip_with_index
else:
    _i_concat_eager = lazy_function(".operators._concat_eager", "concat_eager", "_i_concat_eager", globals())
    _i_concat_map = lazy_function(".operators._concat_map", "concat_map", "_i_concat_map", globals())
    _i_dematerialize = lazy_function(".operators._materialize", "dematerialize", "_i_dematerialize", globals())
    _i_end_with = lazy_function(".operators._end_with", "end_with", "_i_end_with", globals())
    _i_materialize = lazy_function(".operators._materialize", "materialize", "_i_materialize", globals())
    _i_merge = lazy_function(".operators._merge", "merge", "_i_merge", globals())
    _i_pairwise = lazy_function(".operators._pairwise", "pairwise", "_i_pairwise", globals())
    _i_publish_selector = lazy_function(".operators._publish_selector", "publish_selector", "_i_publish_selector", globals())
    _i_switch_map = lazy_function(".operators._switch_map", "switch_map", "_i_switch_map", globals())
    _i_switch_on_next = lazy_function(".operators._switch_on_next", "switch_on_next", "_i_switch_on_next", globals())
    _i_zip_with_index = lazy_function(".operators._zip_with_index", "zip_with_index", "_i_zip_with_index", globals())

__all__ = ["CombineMixin"]

T = TypeVar("T")
R = TypeVar("R")
E = TypeVar("E")


def _f(mixin: CombineMixin[T]) -> Flowable[T]:
    """The mixin is always a Flowable at run time (typing helper)."""
    return cast("Flowable[T]", mixin)


class CombineMixin(Generic[T]):
    __slots__ = ()

    # ------------------------------------------------------------------------------------------
    # Delay-error flattening

    def concat_map_delay_error(
        self, mapper: Callable[[T], Publisher[R]], till_the_end: bool = True, prefetch: int = 2
    ) -> Flowable[R]:
        """``concat_map`` that delays errors (RxJava ``concatMapDelayError``).

        With ``till_the_end`` (default) an upstream or inner error waits until every element has
        been mapped and every inner has run; the errors (several: an ``ExceptionGroup``) come after
        the last element. Without it an error stops the stream at the next inner boundary: an
        upstream error lets the current inner finish, an inner error cancels the upstream, and the
        elements still queued are dropped. A raising mapper ends the stream at once (with the
        errors collected so far), as in RxJava.

        Example::

            f = Flowable.just(1, 2).concat_map_delay_error(
                lambda x: Flowable.error(ValueError(x)) if x == 1 else Flowable.just(x))
            f.test().assert_values(2).assert_error(ValueError)

        Backpressure: as :meth:`concat_map`: prefetches ``prefetch`` upstream elements; demand an
        inner (or a failed inner) did not use carries over to the next one.
        Scheduler: none; ``mapper`` runs in the drain, on the thread that delivered the outer
        element, ended the previous inner or requested; elements arrive on each inner's thread.
        """
        return _i_concat_map(_f(self), mapper, prefetch, True, till_the_end)

    def switch_map_delay_error(self, mapper: Callable[[T], Publisher[R]], prefetch: int = DEFAULT_PREFETCH) -> Flowable[R]:
        """``switch_map(mapper, delay_error=True)`` (RxJava ``switchMapDelayError``): errors of the
        outer and of the inners are collected and signalled after the outer and the last inner
        have terminated (several: an ``ExceptionGroup``).

        Example::

            f = Flowable.just(1, 2).switch_map_delay_error(
                lambda x: Flowable.error(ValueError(x)) if x == 1 else Flowable.just(x))
            f.test().assert_values(2).assert_error(ValueError)

        Backpressure: as :meth:`switch_map`: the outer is consumed unbounded, each inner is
        prefetched with ``prefetch``; demand carries over to the next inner.
        Scheduler: none; ``mapper`` runs on the outer source's thread; elements go out serially on
        the current inner's thread (or on the requesting thread).
        """
        return _i_switch_map(_f(self), mapper, prefetch, True)

    @staticmethod
    def merge_delay_error(
        *sources: Publisher[E], max_concurrency: int | None = None, prefetch: int = DEFAULT_PREFETCH
    ) -> Flowable[E]:
        """``merge(*sources, delay_error=True)`` (RxJava ``mergeDelayError``): every source runs to
        its end; the errors (several: an ``ExceptionGroup``) arrive after all the elements.

        Example::

            f = Flowable.merge_delay_error(Flowable.error(ValueError()), Flowable.just(2))
            f.test().assert_values(2).assert_error(ValueError)

        Backpressure: as :meth:`merge`: each source is prefetched with ``prefetch`` (replenished
        at 75%), at most ``max_concurrency`` are subscribed at once; downstream demand is honoured.
        Scheduler: none; elements go out serially, on the thread of the source that signals them,
        or on the requesting thread when queued elements drain.
        """
        return _i_merge(*sources, max_concurrency=max_concurrency, prefetch=prefetch, delay_error=True)

    # ------------------------------------------------------------------------------------------
    # Eager concatenation, switching

    @staticmethod
    def concat_eager(
        *sources: Publisher[E], max_concurrency: int | None = None, prefetch: int = DEFAULT_PREFETCH
    ) -> Flowable[E]:
        """Subscribe to all ``sources`` at once and emit their elements in source order (RxJava
        ``concatEager``); a single iterable of sources is accepted too.

        Example::

            Flowable.concat_eager(Flowable.just(1, 2), Flowable.just(3)).test().assert_result(1, 2, 3)

        Backpressure: each source is buffered up to ``prefetch`` elements (bounded; replenished as
        the ordered output consumes them); at most ``max_concurrency`` sources (default: all) are
        subscribed at once; downstream demand is honoured. Errors are immediate.
        Scheduler: none; the sources run on their own threads; their elements go out in order,
        serially, on whichever thread drains (a source's or the requesting one).
        """
        return _i_concat_eager(*sources, max_concurrency=max_concurrency, prefetch=prefetch)

    @overload
    @staticmethod
    def switch_on_next(sources: Publisher[Flowable[E]], prefetch: int = DEFAULT_PREFETCH, delay_error: bool = False) -> Flowable[E]: ...

    @overload
    @staticmethod
    def switch_on_next(sources: Publisher[Publisher[E]], prefetch: int = DEFAULT_PREFETCH, delay_error: bool = False) -> Flowable[E]: ...

    @staticmethod
    def switch_on_next(
        sources: Publisher[Flowable[E]] | Publisher[Publisher[E]], prefetch: int = DEFAULT_PREFETCH, delay_error: bool = False
    ) -> Flowable[E]:
        """Mirror the most recent Publisher emitted by ``sources`` (RxJava ``switchOnNext``; with
        ``delay_error`` ``switchOnNextDelayError``): a new inner cancels the previous one.

        Example::

            outer = Flowable.just(Flowable.just(1, 2), Flowable.just(3))
            Flowable.switch_on_next(outer).test().assert_result(1, 2, 3)

        Backpressure: the outer is consumed unbounded (as RxJava); each inner is prefetched with
        ``prefetch``; demand carries over to the next inner. Completes after the outer and the
        last inner complete.
        Scheduler: none; elements go out serially on the current inner's thread (or on the
        requesting thread).
        """
        return _i_switch_on_next(sources, prefetch, delay_error)

    def end_with(self, *items: Any) -> Flowable[T]:
        """Emit this Flowable's elements, then ``items`` (or, given one Publisher, its elements):
        the counterpart of :meth:`start_with` (RxJava has no ``endWith``: it is ``concatWith``).

        Example::

            Flowable.just(1).end_with(2, 3).test().assert_result(1, 2, 3)

        Backpressure: as :meth:`concat`: demand this Flowable did not use carries over to the items.
        Scheduler: none; this Flowable's elements go out on its own thread, the items on the thread
        where it completed (or on the requesting thread).
        """
        return _i_end_with(_f(self), *items)

    # ------------------------------------------------------------------------------------------
    # Pairing with neighbours and indexes

    def pairwise(self) -> Flowable[tuple[T, T]]:
        """Emit ``(previous, current)`` for each element after the first (RxJS ``pairwise``; in
        RxJava ``buffer(2, 1)`` minus its trailing one-element list).

        Example::

            Flowable.just(1, 2, 3).pairwise().test().assert_result((1, 2), (2, 3))

        Backpressure: the first request asks the upstream for one more element (the first one
        makes no pair); later requests pass straight through.
        Scheduler: none; tuples go out on the upstream's thread.
        """
        return _i_pairwise(_f(self))

    def zip_with_index(self, start: int = 0) -> Flowable[tuple[int, T]]:
        """Emit ``(index, element)`` tuples, the index counting from ``start`` (index first, as
        Python's ``enumerate`` and Reactor's ``index()``; RxJava has no such operator).

        Example::

            Flowable.just("a", "b").zip_with_index().test().assert_result((0, "a"), (1, "b"))

        Backpressure: requests pass straight through (one tuple per element).
        Scheduler: none; tuples go out on the upstream's thread.
        """
        return _i_zip_with_index(_f(self), start)

    def enumerate(self, start: int = 0) -> Flowable[tuple[int, T]]:
        """Alias of :meth:`zip_with_index`, read as Python's ``enumerate``: ``(index, element)``.

        Example::

            Flowable.just("a", "b").enumerate(1).test().assert_result((1, "a"), (2, "b"))

        Backpressure: requests pass straight through (one tuple per element).
        Scheduler: none; tuples go out on the upstream's thread.
        """
        return _i_zip_with_index(_f(self), start, "enumerate")

    # ------------------------------------------------------------------------------------------
    # Signals as values

    def materialize(self) -> Flowable[Notification[T]]:
        """Turn every signal into a :class:`~rstreams.flowable.Notification` value: one per element,
        then one for the terminal signal, then complete (RxJava ``materialize``).

        Example::

            sub = Flowable.just(1).materialize().test()
            sub.assert_result(Notification.of_next(1), Notification.of_complete())

        Backpressure: requests pass straight through; the terminal notification waits for demand.
        Scheduler: none; notifications go out on the upstream's thread (the last one on the
        requesting thread when it waited for demand).
        """
        return _i_materialize(_f(self))

    @overload
    def dematerialize(self: CombineMixin[Notification[R]]) -> Flowable[R]: ...

    @overload
    def dematerialize(self, selector: Callable[[T], Notification[R]]) -> Flowable[R]: ...

    def dematerialize(self, selector: Callable[[T], Notification[R]] | None = None) -> Flowable[R]:
        """Turn :class:`~rstreams.flowable.Notification` values (or ``selector(element)``) back into
        signals (RxJava ``dematerialize(selector)``; here the selector is optional: without it the
        elements must be Notifications): ``on_next`` ones emit their value; the first
        ``on_error``/``on_complete`` one cancels the upstream and ends the stream. An element that
        is not a Notification fails the stream with ``TypeError``.

        Example::

            notes = Flowable.just(Notification.of_next(1), Notification.of_complete())
            notes.dematerialize().test().assert_result(1)

        Backpressure: requests pass straight through (one element per ``on_next`` notification).
        Scheduler: none; signals go out on the upstream's thread.
        """
        return _i_dematerialize(_f(self), selector)

    # ------------------------------------------------------------------------------------------
    # Multicasting (``publish`` itself lives in ``_flowable.py``)

    def _publish_selector(self, selector: Callable[[Flowable[T]], Publisher[R]], prefetch: int) -> Flowable[R]:
        """``publish(selector, prefetch)``: reached from ``Flowable.publish`` (no import per call)."""
        return _i_publish_selector(_f(self), selector, prefetch)
