"""single and single_or_error (RxJava ``single(defaultItem)``, ``singleOrError``): the only element.

An aggregate of :mod:`._aggregate` over ``take(2)`` (the second element proves there is more than
one, so at most two are ever asked for and computed; RxJava requests unbounded and cancels at the
second, with the same signals):

* exactly one element: it is emitted (when requested) and the stream completes;
* a second element: ``ValueError`` (RxJava's IllegalArgumentException, as ``blocking_single``); the
  upstream is cancelled there;
* no element: ``single(default)`` emits ``default``; ``single_or_error`` signals
  :class:`~rstreams.errors.NoSuchElementError`.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

from ...errors import NoneElementError, NoSuchElementError
from .._enums import NOTSET
from .._flowable import Flowable
from ._aggregate import _AggregateFlowable, _Folder, _Live
from ._take_skip import take

__all__ = ["single", "single_or_error"]

T = TypeVar("T")

_ERROR: Final = object()  # "no element and no default": signal NoSuchElementError


def _more_than_one(op: str) -> ValueError:
    return ValueError(f"{op}(): the stream has more than one element")


class _Single(_Folder[T, Any]):
    def __init__(self, op: str, default: Any) -> None:
        self.name = op
        self.default = default

    def start(self) -> Any:
        return NOTSET

    def step(self, acc: Any, item: T) -> Any:
        if acc is not NOTSET:
            raise _more_than_one(self.name)  # the aggregate cancels the upstream and signals it
        return item

    def chunk(self, acc: Any, items: list[T], live: _Live | None = None) -> Any:
        if not items:
            return acc
        if acc is not NOTSET or len(items) > 1:
            raise _more_than_one(self.name)
        return items[0]

    def finish(self, acc: Any) -> Any:
        if acc is not NOTSET:
            return acc
        if self.default is _ERROR:
            raise NoSuchElementError(f"{self.name}(): the stream completed without any element")
        return self.default


def single(source: Flowable[T], default: T) -> Flowable[T]:
    if default is None:
        raise NoneElementError("single(): the default is None; None is not a valid element (rule 2.13)")
    return _AggregateFlowable(take(source, 2), lambda: _Single("single", default))


def single_or_error(source: Flowable[T]) -> Flowable[T]:
    return _AggregateFlowable(take(source, 2), lambda: _Single("single_or_error", _ERROR))
