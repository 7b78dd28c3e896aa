"""Single-valued results (seed 004, "single valued results"): hold one value until requested.

:class:`DeferredScalarSubscription` is the downstream Subscription of every operator that emits at
most one value computed from the whole upstream (``reduce``, ``count``, ``to_list``, ``last``,
``from_callable``...). Its state machine makes ``request`` racing ``complete(value)`` emit exactly
once (race: value arrives vs demand arrives, from two threads).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

from .._internal.atomics import AtomicInt
from .._internal.requests import validate_request
from .._spec import Subscriber

__all__ = ["DeferredScalarSubscription"]

T = TypeVar("T")

_NO_REQUEST_NO_VALUE: Final = 0
_NO_REQUEST_HAS_VALUE: Final = 1
_HAS_REQUEST_NO_VALUE: Final = 2
_HAS_REQUEST_HAS_VALUE: Final = 3
_CANCELLED: Final = 4


class DeferredScalarSubscription(Generic[T]):
    """Emits one value (then on_complete) once it is both available and requested.

    ``on_cancel`` runs on cancel and on a rule 3.9 bad request (it cancels the upstream).
    """

    __slots__ = ("_downstream", "_state", "_value", "_on_cancel")

    def __init__(self, downstream: Subscriber[T], on_cancel: Callable[[], Any] | None = None) -> None:
        self._downstream: Subscriber[T] | None = downstream
        self._state = AtomicInt(_NO_REQUEST_NO_VALUE)
        self._value: T | None = None
        self._on_cancel = on_cancel

    @property
    def is_cancelled(self) -> bool:
        return self._state._value == _CANCELLED

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self.error(err, cancel_upstream=True)
                return
        state = self._state
        while True:
            s = state._value
            if s == _NO_REQUEST_NO_VALUE:
                if state.compare_and_set(s, _HAS_REQUEST_NO_VALUE):
                    return
            elif s == _NO_REQUEST_HAS_VALUE:
                if state.compare_and_set(s, _HAS_REQUEST_HAS_VALUE):
                    self._emit()
                    return
            else:
                return

    def complete(self, value: T) -> None:
        """Offer the single value: emitted now if requested, else when requested."""
        state = self._state
        while True:
            s = state._value
            if s == _HAS_REQUEST_NO_VALUE:
                self._value = value
                if state.compare_and_set(s, _HAS_REQUEST_HAS_VALUE):
                    self._emit()
                    return
            elif s == _NO_REQUEST_NO_VALUE:
                self._value = value
                if state.compare_and_set(s, _NO_REQUEST_HAS_VALUE):
                    return
            else:
                return

    def complete_empty(self) -> None:
        """Complete without a value (no demand needed)."""
        state = self._state
        while True:
            s = state._value
            if s in (_NO_REQUEST_NO_VALUE, _HAS_REQUEST_NO_VALUE):
                if state.compare_and_set(s, _CANCELLED):
                    d = self._downstream
                    self._release()
                    if d is not None:
                        d.on_complete()
                    return
            else:
                return

    def error(self, error: BaseException, cancel_upstream: bool = False) -> None:
        state = self._state
        while True:
            s = state._value
            if s == _CANCELLED or s == _HAS_REQUEST_HAS_VALUE:
                from .._internal import plugins

                plugins.on_error(error, "error after a single-valued result was emitted or cancelled")
                return
            if state.compare_and_set(s, _CANCELLED):
                break
        d = self._downstream
        cb = self._on_cancel if cancel_upstream else None
        self._release()
        if cb is not None:
            cb()
        if d is not None:
            d.on_error(error)

    def _emit(self) -> None:
        d = self._downstream
        v = self._value
        self._release()
        if d is not None and v is not None:
            if self._state._value != _CANCELLED:
                d.on_next(v)
                if self._state._value != _CANCELLED:
                    d.on_complete()

    def _release(self) -> None:
        self._downstream = None  # rule 3.13
        self._value = None

    def cancel(self) -> None:
        if self._state.get_and_set(_CANCELLED) != _CANCELLED:
            cb = self._on_cancel
            self._release()
            self._on_cancel = None
            if cb is not None:
                cb()
