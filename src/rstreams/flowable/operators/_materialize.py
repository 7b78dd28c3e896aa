"""materialize() / dematerialize(): signals as values, and back (RxJava 3 semantics).

:class:`Notification` is the value: a frozen record of one signal, ``kind`` being ``"on_next"``
(with ``value``), ``"on_error"`` (with ``error``) or ``"on_complete"``.

* ``materialize``: every element becomes ``Notification.of_next(x)``; the upstream's terminal
  signal becomes one more notification, then the stream completes. That last notification waits
  for demand (the post-complete idiom of seed 004: the completed flag and the demand share one
  atomic counter; race: request vs the upstream's terminal signal).
* ``dematerialize(selector=None)``: each element (or ``selector(element)``) must be a
  Notification; ``on_next`` ones emit their value, the first ``on_error``/``on_complete`` one
  cancels the upstream and terminates the stream. Requests pass straight through.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, final

from ..._internal import plugins
from ..._spec import Subscriber
from ...errors import NoneElementError
from .._base import BasicSubscriber, none_result_error
from .._flowable import Flowable
from ._on_error import HoldLastSubscriber

__all__ = ["Notification", "materialize", "dematerialize"]

T = TypeVar("T")
R = TypeVar("R")

Kind = Literal["on_next", "on_error", "on_complete"]


@final
@dataclass(frozen=True, slots=True)
class Notification(Generic[T]):
    """One Reactive Streams signal as a value (RxJava's ``Notification``; its ``createOnNext``/
    ``createOnError``/``createOnComplete`` are ``of_next``/``of_error``/``of_complete`` here, its
    ``isOnNext``/``getValue``... the ``is_on_next``/``value``... attributes).

    Example::

        Notification.of_next(1)              # Notification(kind='on_next', value=1, error=None)
        Notification.of_error(ValueError())  # .is_on_error is True; .error is the exception
        Notification.of_complete()           # .is_on_complete is True

    Every instance is a valid signal (checked at construction: an ``on_next`` value is never None,
    rule 2.13); ``value`` is None unless ``kind == "on_next"``, ``error`` None unless
    ``"on_error"``. The ``of_*`` constructors are the short spellings.
    """

    kind: Kind
    value: T | None = None
    error: BaseException | None = None

    def __post_init__(self) -> None:
        # every Notification is a valid signal: dematerialize never emits None (rule 2.13)
        kind = self.kind
        if kind == "on_next":
            if self.value is None:
                raise NoneElementError("Notification: an on_next value is None (rule 2.13)")
            if self.error is not None:
                raise ValueError("Notification: an on_next notification carries no error")
        elif kind == "on_error":
            if not isinstance(self.error, BaseException):
                raise TypeError(f"Notification: an on_error notification needs an exception, got {type(self.error).__name__}")
            if self.value is not None:
                raise ValueError("Notification: an on_error notification carries no value")
        elif kind == "on_complete":
            if self.value is not None or self.error is not None:
                raise ValueError("Notification: an on_complete notification carries no value or error")
        else:
            raise ValueError(f"Notification: kind must be 'on_next', 'on_error' or 'on_complete', got {kind!r}")

    @staticmethod
    def of_next(value: R) -> Notification[R]:
        return Notification("on_next", value, None)

    @staticmethod
    def of_error(error: BaseException) -> Notification[Any]:
        return Notification("on_error", None, error)

    @staticmethod
    def of_complete() -> Notification[Any]:
        return _COMPLETE

    @property
    def is_on_next(self) -> bool:
        return self.kind == "on_next"

    @property
    def is_on_error(self) -> bool:
        return self.kind == "on_error"

    @property
    def is_on_complete(self) -> bool:
        return self.kind == "on_complete"


_COMPLETE: Notification[Any] = Notification("on_complete")

# materialize's per-element path builds on_next notifications through the slot descriptors,
# skipping the construction checks (half the cost): the value comes from an upstream that already
# honours rule 2.13 (internal operators and the wrapped foreign publishers never deliver None)
_new = object.__new__
_set_kind = Notification.__dict__["kind"].__set__
_set_value = Notification.__dict__["value"].__set__
_set_error = Notification.__dict__["error"].__set__


def _of_next_unchecked(value: Any) -> Notification[Any]:
    n: Notification[Any] = _new(Notification)
    _set_kind(n, "on_next")
    _set_value(n, value)
    _set_error(n, None)
    return n


# ---------------------------------------------------------------------------------------------
# materialize


@final
class _MaterializeSubscriber(HoldLastSubscriber[Any]):
    __slots__ = ()

    def on_next(self, item: Any) -> None:
        if self.done:
            return
        self._emitted += 1
        self.downstream.on_next(_of_next_unchecked(item))

    def on_error(self, error: BaseException) -> None:
        if self.done:
            plugins.on_error(error, "materialize: on_error after termination")
            return
        self._hold_last(Notification("on_error", None, error))

    def on_complete(self) -> None:
        if self.done:
            return
        self._hold_last(_COMPLETE)


@final
class _MaterializeFlowable(Flowable[Notification[T]]):
    __slots__ = ("_source",)

    def __init__(self, source: Flowable[T]) -> None:
        self._source = source

    def _subscribe_actual(self, subscriber: Subscriber[Notification[T]]) -> None:
        self._source.subscribe(_MaterializeSubscriber(subscriber))


def materialize(source: Flowable[T]) -> Flowable[Notification[T]]:
    return _MaterializeFlowable(source)


# ---------------------------------------------------------------------------------------------
# dematerialize


@final
class _DematerializeSubscriber(BasicSubscriber[Any, Any]):
    __slots__ = ("_selector",)

    def __init__(self, downstream: Subscriber[Any], selector: Callable[[Any], Any] | None) -> None:
        super().__init__(downstream)
        self._selector = selector

    def on_next(self, item: Any) -> None:
        if self.done:
            return
        sel = self._selector
        if sel is None:
            n = item
        else:
            try:
                n = sel(item)
            except Exception as e:
                self.fail(e)
                return
            if n is None:
                self.fail(none_result_error("dematerialize", "the selector"))
                return
        if type(n) is not Notification:
            self.fail(TypeError(f"dematerialize(): expected a Notification, got {type(n).__name__}"))
            return
        kind = n.kind
        if kind == "on_next":
            self.downstream.on_next(n.value)
        elif kind == "on_error":
            self.upstream.cancel()
            self.on_error(n.error)  # type: ignore[arg-type]  # never None (checked at construction)
        else:
            self.upstream.cancel()
            self.on_complete()


@final
class _DematerializeFlowable(Flowable[R]):
    __slots__ = ("_source", "_selector")

    def __init__(self, source: Flowable[Any], selector: Callable[[Any], Notification[R]] | None) -> None:
        self._source = source
        self._selector = selector

    def _subscribe_actual(self, subscriber: Subscriber[R]) -> None:
        self._source.subscribe(_DematerializeSubscriber(subscriber, self._selector))


def dematerialize(source: Flowable[Any], selector: Callable[[Any], Notification[R]] | None = None) -> Flowable[R]:
    if selector is not None and not callable(selector):
        raise TypeError(f"dematerialize(): selector must be callable, got {type(selector).__name__}")
    return _DematerializeFlowable(source, selector)
