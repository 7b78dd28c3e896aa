"""to_multimap (RxJava ``toMultimap(keySelector, valueSelector)``): a dict of key -> list of values.

An aggregate of :mod:`._aggregate`. For each element the key selector runs first, then the value
selector (as RxJava), and the value is appended to its key's list (lists keep arrival order; the
dict keeps the order keys first appeared). Over a fused chunk or a boundary batch the selectors run
in one local loop that stops at a cancel.

A value selector returning ``None`` ends the stream with :class:`~rstreams.errors.NoneElementError`
(a ``None`` would sit in the emitted lists as if it were an element); a ``None`` key is an ordinary
dict key, as in ``to_dict``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from .._base import none_result_error
from .._flowable import Flowable
from ._aggregate import _AggregateFlowable, _Folder, _Live

__all__ = ["to_multimap"]

T = TypeVar("T")


class _ToMultimap(_Folder[T, dict[Any, list[Any]]]):
    name = "to_multimap"

    def __init__(self, key_fn: Callable[[T], Any], value_fn: Callable[[T], Any] | None) -> None:
        self.key_fn = key_fn
        self.value_fn = value_fn

    def start(self) -> dict[Any, list[Any]]:
        return {}

    def step(self, acc: dict[Any, list[Any]], item: T) -> dict[Any, list[Any]]:
        k = self.key_fn(item)
        vf = self.value_fn
        if vf is None:
            v: Any = item
        else:
            v = vf(item)
            if v is None:
                raise none_result_error("to_multimap", "the value selector")
        bucket = acc.get(k)
        if bucket is None:
            acc[k] = [v]
        else:
            bucket.append(v)
        return acc

    def chunk(self, acc: dict[Any, list[Any]], items: list[T], live: _Live | None = None) -> dict[Any, list[Any]]:
        kf = self.key_fn
        vf = self.value_fn
        get = acc.get
        for x in items:
            if live is not None and live._done:
                break  # rule 3.12: a cancel stops the selectors' calls at this element
            k = kf(x)
            if vf is None:
                v: Any = x
            else:
                v = vf(x)
                if v is None:
                    raise none_result_error("to_multimap", "the value selector")
            bucket = get(k)
            if bucket is None:
                acc[k] = [v]
            else:
                bucket.append(v)
        return acc


def to_multimap(
    source: Flowable[T], key_fn: Callable[[T], Hashable], value_fn: Callable[[T], Any] | None = None
) -> Flowable[dict[Any, list[Any]]]:
    if not callable(key_fn):
        raise TypeError(f"to_multimap(): key_selector must be a callable, got {type(key_fn).__name__}")
    if value_fn is not None and not callable(value_fn):
        raise TypeError(f"to_multimap(): value_selector must be a callable or None, got {type(value_fn).__name__}")
    return _AggregateFlowable(source, lambda: _ToMultimap(key_fn, value_fn))
