"""Facade methods of Flowable for buffers and windows cut by a boundary Publisher or a predicate (a mixin of :class:`Flowable`).

Methods here follow the same rules as ``_flowable.py``: thin, calling their operator module
through ``lazy_function`` (imported on first use), each with a docstring holding a small example
and "Backpressure:"/"Scheduler:" notes.

``window`` (by count, or by a boundary Publisher) is here too; ``buffer`` by count or boundary is
in ``_flowable.py``; the processing-time cuts (``buffer_timed``, ``window_timed``) are in
``_facade_time.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

from .._internal.requests import DEFAULT_PREFETCH
from ._lazy import lazy_function

if TYPE_CHECKING:
    from .._spec import Publisher
    from ._flowable import Flowable

# Operator implementations, imported on first use (``import rstreams`` stays light).
if TYPE_CHECKING:
    from .operators._buffer_until import buffer_until as _i_buffer_until
    from .operators._buffer_until import buffer_while as _i_buffer_while
    from .operators._window import window as _i_window
    from .operators._window_until import window_until as _i_window_until
    from .operators._window_until import window_while as _i_window_while
else:
    _i_buffer_until = lazy_function(".operators._buffer_until", "buffer_until", "_i_buffer_until", globals())
    _i_buffer_while = lazy_function(".operators._buffer_until", "buffer_while", "_i_buffer_while", globals())
    _i_window = lazy_function(".operators._window", "window", "_i_window", globals())
    _i_window_until = lazy_function(".operators._window_until", "window_until", "_i_window_until", globals())
    _i_window_while = lazy_function(".operators._window_until", "window_while", "_i_window_while", globals())

__all__ = ["BoundaryMixin"]

T = TypeVar("T")


def _f(mixin: BoundaryMixin[T]) -> Flowable[T]:
    """The mixin is always a Flowable at run time (typing helper)."""
    return cast("Flowable[T]", mixin)


class BoundaryMixin(Generic[T]):
    __slots__ = ()

    def buffer_until(self, predicate: Callable[[T], object], cut_before: bool = False) -> Flowable[list[T]]:
        """Collect elements into lists, closing a list after each element for which ``predicate``
        is true (that element ends the list); with ``cut_before=True`` such an element starts the
        next list instead. A non-empty last list is emitted at completion (Reactor's ``bufferUntil``).

        Example::

            Flowable.just(1, 2, 0, 3, 0).buffer_until(lambda x: x == 0).test().assert_result([1, 2, 0], [3, 0])
            Flowable.just(1, 0, 2).buffer_until(lambda x: x == 0, cut_before=True).test().assert_result([1], [0, 2])

        Backpressure: ``request(n)`` lists asks the upstream for ``n`` elements, and one more for
        each element that does not close a list; the last list waits for demand.
        Scheduler: none; lists go out on the upstream's thread (the last one, on the thread that
        requests it).
        """
        return _i_buffer_until(_f(self), predicate, cut_before)

    def buffer_while(self, predicate: Callable[[T], object]) -> Flowable[list[T]]:
        """Collect consecutive elements for which ``predicate`` is true into lists; an element for
        which it is false closes the list and is dropped (a separator; no empty lists). Reactor's
        ``bufferWhile``.

        Example::

            Flowable.just(1, 2, 0, 0, 3).buffer_while(lambda x: x != 0).test().assert_result([1, 2], [3])

        Backpressure: ``request(n)`` lists asks the upstream for ``n`` elements, and one more for
        each element that does not close a list; the last list waits for demand.
        Scheduler: none; lists go out on the upstream's thread.
        """
        return _i_buffer_while(_f(self), predicate)

    def window_until(
        self, predicate: Callable[[T], object], cut_before: bool = False, prefetch: int = DEFAULT_PREFETCH
    ) -> Flowable[Flowable[T]]:
        """Split into consecutive windows (Flowables), closing a window after each element for
        which ``predicate`` is true (that element ends it); with ``cut_before=True`` such an
        element opens the next window instead (Reactor's ``windowUntil``). A window is emitted
        when its first element arrives, so no window is empty, except, with ``cut_before``, a
        first window when the very first element matches (as Reactor).

        Example::

            (Flowable.just(1, 2, 0, 3).window_until(lambda x: x == 0)
                .concat_map(lambda w: w.to_list()).test().assert_result([1, 2, 0], [3]))

        Backpressure: the upstream is asked for ``prefetch`` elements and replenished as the
        windows' subscribers consume them, so at most ``prefetch`` elements wait in windows.
        A window waits for a request of the main subscriber before it is emitted. Each window can
        be subscribed once; a window not subscribed during ``on_next`` is abandoned: it no longer
        holds back the upstream and keeps its elements for a late subscriber.
        Scheduler: none; signals stay on the upstream's thread (or the window subscriber's).
        """
        return _i_window_until(_f(self), predicate, cut_before, prefetch)

    def window_while(self, predicate: Callable[[T], object], prefetch: int = DEFAULT_PREFETCH) -> Flowable[Flowable[T]]:
        """Split into windows of consecutive elements for which ``predicate`` is true; an element
        for which it is false closes the window and is dropped (a separator). As Reactor's
        ``windowWhile``, a leading separator or two separators in a row produce an empty window.

        Example::

            (Flowable.just(1, 2, 0, 3).window_while(lambda x: x != 0)
                .concat_map(lambda w: w.to_list()).test().assert_result([1, 2], [3]))

        Backpressure: as :meth:`window_until`: ``prefetch`` elements in flight, replenished as
        windows are consumed; a window waits for the main subscriber's demand.
        Scheduler: none; signals stay on the upstream's thread (or the window subscriber's).
        """
        return _i_window_while(_f(self), predicate, prefetch)

    @overload
    def window(self, count: int, skip: int | None = None) -> Flowable[Flowable[T]]: ...

    @overload
    def window(self, boundary: Publisher[Any], /) -> Flowable[Flowable[T]]: ...

    def window(self, count: int | Publisher[Any], skip: int | None = None) -> Flowable[Flowable[T]]:
        """Split into windows (Flowables) of ``count`` elements, a new one every ``skip`` elements
        (default ``skip = count``: consecutive windows; ``skip > count``: gaps; ``skip < count``:
        overlapping windows).

        Given a Publisher ``boundary`` instead (RxJava's ``window(Publisher)``): the first window
        opens at subscription, each element of ``boundary`` closes it and opens the next; the
        completion of the source or of the boundary completes the open window and the stream.

        Example::

            Flowable.range(0, 5).window(2).flat_map(lambda w: w.to_list()).test().assert_result([0, 1], [2, 3], [4])
            tp = TestPublisher.create(); b = TestPublisher.create()
            sub = Flowable.from_publisher(tp).window(b).flat_map(lambda w: w.to_list()).test()
            tp.next(1, 2); b.next(0); tp.next(3); tp.complete(); sub.assert_result([1, 2], [3])

        Backpressure: ``request(n)`` asks the upstream for the elements of ``n`` windows; each window
        buffers at most ``count`` elements for its subscriber. Each window can be subscribed once.
        With a boundary, the source and the boundary are requested unbounded (RxJava 3); opening a
        window the downstream has not requested signals ``MissingBackpressureError``; each window
        buffers its elements until its subscriber requests them.
        Scheduler: none; signals stay on the upstream's thread (or the window subscriber's, or the
        boundary's).
        """
        return _i_window(_f(self), count, skip)
