"""concat_eager(*sources): subscribe to every source at once, emit them in order (RxJava 3
``concatEager``/``concatArrayEager``).

It is :func:`._concat_map_eager.concat_map_eager` over the sources with the identity mapper:
``max_concurrency`` sources are subscribed at once (default: all of them), each buffered up to
``prefetch`` elements (its bounded prefetch, replenished as the ordered drain consumes it); the
elements go out in source order. Errors are immediate, as RxJava's ``concatEager``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..._internal.arguments import positive_int
from ..._internal.requests import DEFAULT_PREFETCH
from ..._spec import Publisher
from .._base import as_flowable, variadic_sources
from .._flowable import Flowable

__all__ = ["concat_eager"]

T = TypeVar("T")


def _identity(source: Flowable[T]) -> Flowable[T]:
    return source



def concat_eager(*sources: Publisher[T], max_concurrency: int | None = None, prefetch: int = DEFAULT_PREFETCH) -> Flowable[T]:
    # concat_eager([a, b]): RxJava's concatEager(Iterable)
    flows: tuple[Flowable[Any], ...] = tuple(as_flowable("concat_eager", s) for s in variadic_sources(sources))
    mc = None if max_concurrency is None else positive_int("concat_eager", "max_concurrency", max_concurrency)
    pf = positive_int("concat_eager", "prefetch", prefetch)
    if not flows:
        from ..sources._basic import empty

        return empty()
    if len(flows) == 1:
        return flows[0]
    from ..sources._basic import from_iterable
    from ._concat_map_eager import concat_map_eager

    return concat_map_eager(from_iterable(flows), _identity, len(flows) if mc is None else mc, pf)
