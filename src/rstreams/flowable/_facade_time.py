"""Facade methods of Flowable for the time operators (a mixin of :class:`Flowable`).

Methods here follow the same rules as ``_flowable.py``: thin, lazily importing their operator
module, each with a docstring holding a small example and "Backpressure:"/"Scheduler:" notes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    pass

__all__ = ["TimeOperatorsMixin"]

T = TypeVar("T")


class TimeOperatorsMixin(Generic[T]):
    __slots__ = ()
