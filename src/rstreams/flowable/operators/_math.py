"""sum, min, max and average: single-valued arithmetic aggregates (RxJava's MathFlowable in
RxJavaExtensions, Reactor's MathFlux).

Each is an aggregate of :mod:`._aggregate` (consumes the upstream unbounded, holds its one result
until requested, folds a fused chunk or a boundary batch in one C call where it can):

* ``sum``: ``0 + x1 + x2 + ...`` left to right with ``+`` (any type with ``+``: ints, floats,
  ``Decimal``, ``Fraction``); an empty stream sums to ``0`` (MathFlux, and Python's ``sum``). An
  all-int chunk is one builtin ``sum``; anything else is folded with ``operator.add`` element by
  element, so a float result is the same whether the chain fused or not (Python 3.12's ``sum``
  compensates float rounding, the element-by-element fold does not).
* ``min``/``max``: the least/greatest element (by ``key(element)`` when given); of equal ones the
  first wins (as the builtins). An empty stream completes empty (as RxJava's ``reduce`` without a
  seed), never an error. Elements (or keys) that cannot be compared end the stream with the
  ``TypeError`` Python raises.
* ``average``: ``sum / count`` with true division (a float for ints; ``Decimal`` and ``Fraction``
  keep their type); an empty stream completes empty.

A non-numeric element ends the stream with the ``TypeError`` of ``+``; the upstream is cancelled.
"""

from __future__ import annotations

import builtins
import functools
import operator
from collections.abc import Callable
from typing import Any, TypeVar

from .._enums import NOTSET
from .._flowable import Flowable
from ._aggregate import _AggregateFlowable, _Folder, _Halt, _Live

__all__ = ["sum_", "min_", "max_", "average"]

T = TypeVar("T")

_add = operator.add


def _add_all(acc: Any, items: list[Any]) -> Any:
    """``acc + items[0] + items[1] + ...`` left to right; one builtin ``sum`` for ints only."""
    if type(acc) is int and items and type(items[0]) is int:
        total = builtins.sum(items, acc)
        if type(total) is int:  # every element was an int: exact, the same as the one-by-one fold
            return total
    return functools.reduce(_add, items, acc)


class _Sum(_Folder[Any, Any]):
    name = "sum"

    def start(self) -> Any:
        return 0

    def step(self, acc: Any, item: Any) -> Any:
        return acc + item

    def chunk(self, acc: Any, items: list[Any], live: _Live | None = None) -> Any:
        return _add_all(acc, items)


class _Average(_Folder[Any, Any]):
    """The accumulator is ``(total, count)``."""

    name = "average"

    def start(self) -> Any:
        return (0, 0)

    def step(self, acc: Any, item: Any) -> Any:
        return (acc[0] + item, acc[1] + 1)

    def chunk(self, acc: Any, items: list[Any], live: _Live | None = None) -> Any:
        return (_add_all(acc[0], items), acc[1] + len(items))

    def finish(self, acc: Any) -> Any:
        total, n = acc
        return NOTSET if n == 0 else total / n


class _Extreme(_Folder[Any, Any]):
    """min (``better`` is ``<``) or max (``>``). The accumulator is NOTSET, the best element, or
    with a key ``(key, element)``; a new element replaces it only when strictly better, so of equal
    ones the first wins (as ``builtins.min``/``max``, which compare ``new < best`` the same way)."""

    def __init__(self, name: str, key: Callable[[Any], Any] | None) -> None:
        self.name = name
        self.key = key
        self.better = operator.lt if name == "min" else operator.gt
        self.pick = builtins.min if name == "min" else builtins.max

    def start(self) -> Any:
        return NOTSET

    def step(self, acc: Any, item: Any) -> Any:
        key = self.key
        if key is None:
            return item if acc is NOTSET or self.better(item, acc) else acc
        k = key(item)
        return (k, item) if acc is NOTSET or self.better(k, acc[0]) else acc

    def chunk(self, acc: Any, items: list[Any], live: _Live | None = None) -> Any:
        if not items:
            return acc
        key = self.key
        if key is None:
            best = self.pick(items)  # C loop, no user code
            return best if acc is NOTSET or self.better(best, acc) else acc
        if live is None:
            keys = list(map(key, items))
        else:

            def checked(x: Any) -> Any:
                if live._done:
                    raise _Halt  # rule 3.12: a cancel stops the key's calls at this element
                return key(x)

            keys = list(map(checked, items))
        i = self.pick(range(len(keys)), key=keys.__getitem__)
        k = keys[i]
        return (k, items[i]) if acc is NOTSET or self.better(k, acc[0]) else acc

    def finish(self, acc: Any) -> Any:
        if acc is NOTSET or self.key is None:
            return acc
        return acc[1]


def sum_(source: Flowable[Any]) -> Flowable[Any]:
    return _AggregateFlowable(source, _Sum)


def average(source: Flowable[Any]) -> Flowable[Any]:
    return _AggregateFlowable(source, _Average)


def _check_key(name: str, key: object) -> None:
    if key is not None and not callable(key):
        raise TypeError(f"{name}(): key must be a callable or None, got {type(key).__name__}")


def min_(source: Flowable[T], key: Callable[[T], Any] | None = None) -> Flowable[T]:
    _check_key("min", key)
    return _AggregateFlowable(source, lambda: _Extreme("min", key))


def max_(source: Flowable[T], key: Callable[[T], Any] | None = None) -> Flowable[T]:
    _check_key("max", key)
    return _AggregateFlowable(source, lambda: _Extreme("max", key))
