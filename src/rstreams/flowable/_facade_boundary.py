"""Facade methods of Flowable for buffers and windows cut by a boundary Publisher or a predicate (a mixin of :class:`Flowable`).

Methods here follow the same rules as ``_flowable.py``: thin, calling their operator module
through ``lazy_function`` (imported on first use), each with a docstring holding a small example
and "Backpressure:"/"Scheduler:" notes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar, cast

if TYPE_CHECKING:
    from ._flowable import Flowable

__all__ = ["BoundaryMixin"]

T = TypeVar("T")


def _f(mixin: BoundaryMixin[T]) -> Flowable[T]:
    """The mixin is always a Flowable at run time (typing helper)."""
    return cast("Flowable[T]", mixin)


class BoundaryMixin(Generic[T]):
    __slots__ = ()
