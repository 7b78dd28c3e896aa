"""end_with(*items): this Flowable's elements, then ``items`` (the counterpart of ``start_with``).

RxJava 3 has no ``endWith`` (its ``concatWith``/``concatWithArray`` do the job; RxJS names it
``endWith``). Here it is ``concat_with`` over ``just(*items)``, or over the one Publisher given, so
demand and trampolining are those of :mod:`._concat` (and a fused source folds into one
``itertools.chain``).
"""

from __future__ import annotations

from typing import Any, TypeVar

from ...errors import NoneElementError
from .._base import as_flowable
from .._flowable import Flowable
from ._concat import _build_concat

__all__ = ["end_with"]

T = TypeVar("T")


def end_with(source: Flowable[T], *items: Any) -> Flowable[T]:
    if len(items) == 1 and callable(getattr(items[0], "subscribe", None)):
        return _build_concat([source, as_flowable("end_with", items[0])])
    if not items:
        return source
    for x in items:
        if x is None:
            raise NoneElementError("end_with(): an item is None; None is not a valid element (rule 2.13)")
    from ..sources._basic import just

    return _build_concat([source, just(*items)])
