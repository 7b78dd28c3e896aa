"""switch_on_next(sources): mirror the latest inner Publisher of a Publisher of Publishers
(RxJava 3 ``switchOnNext`` / ``switchOnNextDelayError``).

It is :func:`._switch_map.switch_map` with the identity mapper: a new inner cancels the previous
one; the outer is consumed unbounded; each inner is prefetched ``prefetch`` at a time; the stream
completes after the outer and the last inner complete. ``delay_error`` collects the errors of the
outer and the inners and signals them at the end (one, or an ``ExceptionGroup``).
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..._internal.requests import DEFAULT_PREFETCH
from ..._spec import Publisher
from .._base import as_flowable
from .._flowable import Flowable

__all__ = ["switch_on_next"]

T = TypeVar("T")


def _identity(source: Any) -> Any:
    return source


def switch_on_next(sources: Publisher[Flowable[T]] | Publisher[Publisher[T]], prefetch: int = DEFAULT_PREFETCH, delay_error: bool = False) -> Flowable[T]:
    outer = as_flowable("switch_on_next", sources)
    if not isinstance(prefetch, int) or isinstance(prefetch, bool) or prefetch <= 0:
        raise ValueError(f"switch_on_next(): prefetch must be a positive int, got {prefetch!r}")
    if not isinstance(delay_error, bool):
        raise TypeError(f"switch_on_next(): delay_error must be a bool, got {type(delay_error).__name__}")
    from ._switch_map import switch_map

    return switch_map(outer, _identity, prefetch, delay_error)
