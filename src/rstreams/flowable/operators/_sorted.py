"""to_sorted_list and sorted (RxJava ``toSortedList``, ``sorted``).

``to_sorted_list`` is an aggregate of :mod:`._aggregate`: the elements are gathered as ``to_list``
gathers them (one ``list.extend`` per fused chunk or boundary batch) and sorted once, on
completion, with ``list.sort(key=..., reverse=...)`` (stable: equal elements keep their arrival
order). ``sorted`` is RxJava's own composition, ``to_sorted_list().flat_map_iterable(list)``: the
sorted list is emitted element by element as the downstream requests them.

Python sorts by a key function where RxJava takes a Comparator; ``functools.cmp_to_key`` turns a
comparator into a key. A raising key function (or elements that cannot be compared: ``TypeError``)
ends the stream with that error, after the upstream completed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .._flowable import Flowable
from ._aggregate import _AggregateFlowable, _ToList
from ._flat_map_iterable import flat_map_iterable

__all__ = ["to_sorted_list", "sorted_"]

T = TypeVar("T")


class _ToSortedList(_ToList[T]):
    """to_list's gathering (start, step, chunk), sorted once in ``finish``. A subclass is not
    to_list to group_by's fold table, which looks folders up by their exact type."""

    name = "to_sorted_list"

    def __init__(self, key: Callable[[T], Any] | None, reverse: bool) -> None:
        self.key = key
        self.reverse = reverse

    def finish(self, acc: list[T]) -> list[T]:
        items: list[Any] = acc
        key = self.key
        if key is None:
            items.sort(reverse=self.reverse)
        else:
            items.sort(key=key, reverse=self.reverse)
        return acc


def _check(name: str, key: object, reverse: object) -> None:
    if key is not None and not callable(key):
        raise TypeError(f"{name}(): key must be a callable or None, got {type(key).__name__}")
    if not isinstance(reverse, bool):
        raise TypeError(f"{name}(): reverse must be a bool, got {type(reverse).__name__}")


def to_sorted_list(source: Flowable[T], key: Callable[[T], Any] | None = None, reverse: bool = False) -> Flowable[list[T]]:
    _check("to_sorted_list", key, reverse)
    return _AggregateFlowable(source, lambda: _ToSortedList(key, reverse))


def _identity(items: list[T]) -> list[T]:
    return items


def sorted_(source: Flowable[T], key: Callable[[T], Any] | None = None, reverse: bool = False) -> Flowable[T]:
    _check("sorted", key, reverse)
    return flat_map_iterable(_AggregateFlowable(source, lambda: _ToSortedList(key, reverse)), _identity)
