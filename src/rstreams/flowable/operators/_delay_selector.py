"""delay(selector): delay each element until its own delay Publisher, ``selector(element)``,
signals its first element or completes (RxJava 3 ``delay(Function itemDelayIndicator)``).

As RxJava, this is ``flat_map`` over a per-element Publisher ``take(1) -> the element`` (or the
element when the delay Publisher completes empty), so:

* elements are emitted in the order their delays end, not necessarily the source order;
* the completion waits for every pending delay; an error of the source, of a delay Publisher or of
  ``selector`` fails the stream at once (dropping pending elements), unless ``delay_error``;
* ``selector`` returning ``None`` (or not a Publisher) fails the stream (rule 2.13).

Backpressure: as ``flat_map``: at most ``max_concurrency`` (default 128, RxJava's buffer size)
elements are waiting for their delays; the source is requested as they finish, and an element goes
out only when requested. Concurrency and races are ``flat_map``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..._spec import Publisher
from .._base import none_result_error
from .._flowable import Flowable

__all__ = ["delay_selector"]

T = TypeVar("T")


def delay_selector(
    source: Flowable[T],
    selector: Callable[[T], Publisher[Any]],
    delay_error: bool = False,
    max_concurrency: int = 128,
) -> Flowable[T]:
    if not callable(selector):
        raise TypeError(f"delay(): selector must be callable, got {type(selector).__name__}")
    if not isinstance(delay_error, bool):
        raise TypeError(f"delay(): delay_error must be a bool, got {type(delay_error).__name__}")

    def item_delay(x: T) -> Flowable[T]:
        p = selector(x)
        if p is None:
            raise none_result_error("delay", "the selector")
        if not hasattr(p, "subscribe"):
            raise TypeError(f"delay(): the selector must return a Publisher, got {type(p).__name__}")
        return Flowable.from_publisher(p).take(1).map(lambda _: x).default_if_empty(x)

    return source.flat_map(item_delay, max_concurrency, delay_error=delay_error)
