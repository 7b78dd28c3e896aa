"""Facade methods of Flowable for event-time windows (tumbling, sliding, session; watermark, allowed lateness, keys) (a mixin of :class:`Flowable`).

Methods here follow the same rules as ``_flowable.py``: thin, calling their operator module
through ``lazy_function`` (imported on first use), each with a docstring holding a small example
and "Backpressure:"/"Scheduler:" notes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar, cast

if TYPE_CHECKING:
    from ._flowable import Flowable

__all__ = ["EventTimeMixin"]

T = TypeVar("T")


def _f(mixin: EventTimeMixin[T]) -> Flowable[T]:
    """The mixin is always a Flowable at run time (typing helper)."""
    return cast("Flowable[T]", mixin)


class EventTimeMixin(Generic[T]):
    __slots__ = ()
