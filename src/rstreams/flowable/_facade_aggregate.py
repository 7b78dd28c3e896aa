"""Facade methods of Flowable for sorting, sets, multimaps, arithmetic aggregates, single-element checks and the blocking samplers (a mixin of :class:`Flowable`).

Methods here follow the same rules as ``_flowable.py``: thin, calling their operator module
through ``lazy_function`` (imported on first use), each with a docstring holding a small example
and "Backpressure:"/"Scheduler:" notes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar, cast

if TYPE_CHECKING:
    from ._flowable import Flowable

__all__ = ["AggregateMixin"]

T = TypeVar("T")


def _f(mixin: AggregateMixin[T]) -> Flowable[T]:
    """The mixin is always a Flowable at run time (typing helper)."""
    return cast("Flowable[T]", mixin)


class AggregateMixin(Generic[T]):
    __slots__ = ()
