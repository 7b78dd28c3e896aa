"""to_set (RxJava ``collect(HashSet::new, Set::add)``): the distinct elements, as one set.

An aggregate of :mod:`._aggregate`: one ``set.update`` per fused chunk or boundary batch. An
element that cannot be hashed ends the stream with the ``TypeError`` Python raises (the upstream
is cancelled there).
"""

from __future__ import annotations

from typing import TypeVar

from .._flowable import Flowable
from ._aggregate import _AggregateFlowable, _Folder, _Live

__all__ = ["to_set"]

T = TypeVar("T")


class _ToSet(_Folder[T, set[T]]):
    name = "to_set"

    def start(self) -> set[T]:
        return set()

    def step(self, acc: set[T], item: T) -> set[T]:
        acc.add(item)
        return acc

    def chunk(self, acc: set[T], items: list[T], live: _Live | None = None) -> set[T]:
        acc.update(items)  # an unhashable element raises here, the ones before it are added
        return acc


def to_set(source: Flowable[T]) -> Flowable[set[T]]:
    return _AggregateFlowable(source, _ToSet)
