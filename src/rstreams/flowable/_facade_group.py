"""Facade methods of Flowable for grouping by key (a mixin of :class:`Flowable`).

Methods here follow the same rules as ``_flowable.py``: thin, calling their operator module
through ``lazy_function`` (imported on first use), each with a docstring holding a small example
and "Backpressure:"/"Scheduler:" notes. Event-time windows per key are in ``_facade_event_time.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast, overload

from .._internal.requests import DEFAULT_PREFETCH
from ._lazy import lazy_function

if TYPE_CHECKING:
    from ..schedulers import Scheduler
    from ._flowable import Flowable
    from .operators._group_by import GroupedFlowable
    from .operators._group_by import group_by as _i_group_by
else:
    _i_group_by = lazy_function(".operators._group_by", "group_by", "_i_group_by", globals())

__all__ = ["GroupMixin"]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _f(mixin: GroupMixin[T]) -> Flowable[T]:
    """The mixin is always a Flowable at run time (typing helper)."""
    return cast("Flowable[T]", mixin)


class GroupMixin(Generic[T]):
    __slots__ = ()

    @overload
    def group_by(
        self,
        key_fn: Callable[[T], K],
        value_fn: None = None,
        buffer_size: int = DEFAULT_PREFETCH,
        *,
        slow_group: Literal["error", "wait"] = "error",
        expire_after_count: int | None = None,
        expire_after: float | None = None,
        expire_after_idle: float | None = None,
        scheduler: Scheduler | None = None,
    ) -> Flowable[GroupedFlowable[K, T]]: ...

    @overload
    def group_by(
        self,
        key_fn: Callable[[T], K],
        value_fn: Callable[[T], V],
        buffer_size: int = DEFAULT_PREFETCH,
        *,
        slow_group: Literal["error", "wait"] = "error",
        expire_after_count: int | None = None,
        expire_after: float | None = None,
        expire_after_idle: float | None = None,
        scheduler: Scheduler | None = None,
    ) -> Flowable[GroupedFlowable[K, V]]: ...

    def group_by(
        self,
        key_fn: Callable[[T], Hashable],
        value_fn: Callable[[T], Any] | None = None,
        buffer_size: int = DEFAULT_PREFETCH,
        *,
        slow_group: Literal["error", "wait"] = "error",
        expire_after_count: int | None = None,
        expire_after: float | None = None,
        expire_after_idle: float | None = None,
        scheduler: Scheduler | None = None,
    ) -> Flowable[GroupedFlowable[Any, Any]]:
        """Split into groups by ``key_fn``: emits a ``GroupedFlowable`` (with a ``key`` attribute) per
        new key, holding ``value_fn(element)`` (default: the element) of that key.

        Subscribe each group while it is being emitted (``flat_map`` does): a group not subscribed
        by then is abandoned (completed after the element that created it; the key's next element
        starts a new group).

        Group expiry keeps keyed pipelines over endless streams bounded: a group completes (after
        the elements it holds) and frees its state ``expire_after_count`` elements after it opened,
        ``expire_after`` seconds after it opened, or ``expire_after_idle`` seconds after its last
        element, whichever comes first; the key's next element opens a new group (a new
        ``GroupedFlowable``). An element at or after its group's deadline opens the new group, so
        an element at the same instant as the expiry goes to exactly one group. RxJava 3 bounds
        groups with an evicting map instead (``groupBy(..., evictingMapFactory)``); these are
        Reactor/Flink-style inactivity and age timeouts, plus a count.

        ``flat_map(lambda g: g.count())`` (or ``reduce``, ``to_list``, ``collect``, ``all``, ... of
        the group, optionally followed by ``map``) folds each group in place: no subscriber chain
        per group, the same signals.

        Example::

            Flowable.range(0, 6).group_by(lambda x: x % 2).flat_map(
                lambda g: g.to_list().map(lambda xs: (g.key, xs))).test().assert_result((0, [0, 2, 4]), (1, [1, 3, 5]))
            Flowable.range(0, 6).group_by(lambda x: x % 2, expire_after_count=2).flat_map(
                lambda g: g.to_list()).test().assert_result([0, 2], [1, 3], [4], [5])

        Backpressure: the upstream is asked for ``buffer_size`` elements and replenished as groups
        consume. A new key without demand for a new group, or one group holding ``buffer_size``
        unconsumed elements while other groups are open (they would starve), ends the stream with a
        ``MissingBackpressureError`` that names the key and the fix (more ``max_concurrency`` in
        ``flat_map``, ``on_backpressure_buffer()`` inside the group, a larger ``buffer_size``).
        ``slow_group="wait"`` makes the slow-group case plain backpressure instead (RxJava 3): the
        upstream waits for the slow group, and a subscribed group that never requests stalls all.
        Scheduler: none without ``expire_after``/``expire_after_idle``: groups emit on the upstream's
        thread or their subscriber's requesting thread. With them, the deadlines are measured and
        the timers run on ``scheduler`` (default: computation), and a group's completion may be
        emitted on its thread.
        """
        return _i_group_by(
            _f(self),
            key_fn,
            value_fn,
            buffer_size,
            slow_group,
            expire_after_count,
            expire_after,
            expire_after_idle,
            scheduler,
        )
