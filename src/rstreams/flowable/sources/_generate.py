"""``generate(state_fn, generator_fn, dispose_fn)``: a pull-driven, stateful, synchronous source.

Per subscriber: ``state = state_fn()``; then, for each requested element,
``state = generator_fn(state, emitter)``, where the function calls ``emitter.on_next(x)`` at most
once and/or ``emitter.on_complete()`` / ``emitter.on_error(e)``. ``dispose_fn(state)`` runs exactly
once when the stream ends: after the terminal signal, on cancel, or when the generator raised.

The generator runs in a loop owned by whoever moved the demand counter from 0 (seed 004 emission
loop): a ``request`` from inside ``on_next`` only adds demand (rule 3.3: depth 1, no recursion
however long the stream). Demand is read once per batch and published once per batch.

Races guarded here:

* cancel vs the loop: ``cancel`` raises a flag and bumps the demand counter; if the counter was 0
  no loop runs and ``cancel`` disposes the state itself, otherwise the loop owner disposes it at its
  next check. Either way the state is disposed once (an :class:`AtomicFlag` double-checks it).
* bad request (rule 3.9) vs the loop: the error is stored and delivered by the loop owner (or by
  the caller, if it becomes the owner), so it never overlaps an ``on_next``.

A second ``on_next`` in one call breaks the contract (one element per unit of demand, rule 1.1): the
stream ends with :class:`~rstreams.errors.ProtocolViolationError` naming rule 1.1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag, AtomicInt
from ..._internal.requests import add_request, produced, request_or_park
from ..._internal.subscriptions import error_empty
from ..._spec import Subscriber, null_element_message
from ...errors import NoneElementError, ProtocolViolationError
from .._flowable import Emitter, Flowable
from ._basic import check_sync_callable

__all__ = ["generate"]

T = TypeVar("T")
S = TypeVar("S")

@final
class _GenerateEmitter(Emitter[T]):
    """The emitter handed to the generator function; only the loop owner's thread uses it."""

    __slots__ = ("_downstream", "has_next", "terminated")

    def __init__(self, downstream: Subscriber[T]) -> None:
        self._downstream: Subscriber[T] | None = downstream
        self.has_next = False
        self.terminated = False

    def on_next(self, item: T) -> None:
        if self.terminated:
            return
        if self.has_next:
            self.on_error(
                ProtocolViolationError(
                    "1.1",
                    "generate(): the generator function called on_next more than once in one call "
                    "(one element per call, one call per requested element)",
                )
            )
            return
        if item is None:
            self.on_error(NoneElementError(null_element_message("generate(): emitter.on_next")))
            return
        self.has_next = True
        d = self._downstream
        if d is not None:
            d.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            error = NoneElementError(null_element_message("generate(): emitter.on_error"))
        elif not isinstance(error, BaseException):
            # rule 2.13: only exceptions are signalled; a str or an exception class would reach the
            # subscriber as a malformed on_error
            error = TypeError(
                f"generate(): emitter.on_error expects an exception, got {type(error).__name__} {error!r}"
            )
        if self.terminated:
            plugins.on_error(error, "generate(): on_error after the stream ended")
            return
        self.terminated = True
        d = self._downstream
        self._downstream = None  # rule 3.13
        if d is not None:
            d.on_error(error)
        else:  # cancelled during this call (from on_next): the error must not vanish
            plugins.on_error(error, "generate(): on_error after the subscription was cancelled")

    def on_complete(self) -> None:
        if self.terminated:
            return
        self.terminated = True
        d = self._downstream
        self._downstream = None
        if d is not None:
            d.on_complete()


@final
class _GenerateSubscription(Generic[T, S]):
    __slots__ = (
        "_emitter",
        "_state",
        "_generator",
        "_dispose_fn",
        "_requested",
        "_cancelled",
        "_bad_request",
        "_disposed",
    )

    def __init__(
        self,
        downstream: Subscriber[T],
        state: S,
        generator: Callable[[S, Emitter[T]], S],
        dispose_fn: Callable[[S], Any] | None,
    ) -> None:
        self._emitter: _GenerateEmitter[T] = _GenerateEmitter(downstream)
        self._state: S | None = state
        self._generator = generator
        self._dispose_fn = dispose_fn
        self._requested = AtomicInt(0)  # race: request/cancel vs the loop owner
        self._cancelled = False
        self._bad_request: BaseException | None = None
        self._disposed = AtomicFlag()  # dispose exactly once

    def request(self, n: int) -> None:
        if request_or_park(self._requested, n, self._park_bad_request):
            self._loop()

    def _park_bad_request(self, err: BaseException) -> None:
        self._bad_request = err  # rule 3.9: delivered by the loop owner

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        # rule 3.13 (and RS 1.8 "stop signalling"): drop the downstream at once, so a terminal signal
        # the generator makes later in the same call (cancel from inside on_next, then on_complete)
        # never reaches the subscriber that cancelled. A plain reference write: the loop reads it
        # once per signal, and a racing signal from another thread is allowed by rule 1.8.
        self._emitter._downstream = None
        if add_request(self._requested, 1) == 0:  # no loop running: dispose here
            self._dispose(self._state)

    def _dispose(self, state: Any) -> None:
        self._state = None
        self._emitter._downstream = None  # rule 3.13
        if not self._disposed.try_set():
            return
        fn = self._dispose_fn
        if fn is None:
            return
        try:
            fn(state)
        except Exception as e:
            plugins.on_error(e, "generate(): dispose_fn raised")

    def _loop(self) -> None:
        emitter = self._emitter
        gen = self._generator
        requested = self._requested
        state = self._state
        n = requested.get()
        e = 0
        while True:
            while e != n:
                if self._cancelled:
                    self._dispose(state)
                    return
                bad = self._bad_request
                if bad is not None:
                    self._cancelled = True
                    emitter.on_error(bad)
                    self._dispose(state)
                    return
                emitter.has_next = False
                try:
                    state = gen(state, emitter)  # type: ignore[arg-type]
                except Exception as ex:
                    self._cancelled = True
                    emitter.on_error(ex)
                    self._dispose(state)
                    return
                if emitter.terminated:
                    self._cancelled = True
                    self._dispose(state)
                    return
                if emitter.has_next:
                    e += 1
            n = requested.get()
            if n == e:
                self._state = state
                n = produced(requested, e)
                e = 0
                if n == 0:
                    return


@final
class _GenerateFlowable(Flowable[T], Generic[T, S]):
    __slots__ = ("_state_fn", "_generator", "_dispose_fn")

    def __init__(
        self,
        state_fn: Callable[[], S],
        generator: Callable[[S, Emitter[T]], S],
        dispose_fn: Callable[[S], Any] | None,
    ) -> None:
        self._state_fn = state_fn
        self._generator = generator
        self._dispose_fn = dispose_fn

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        try:
            state = self._state_fn()
        except Exception as e:
            error_empty(cast("Subscriber[Any]", subscriber), e)
            return
        subscriber.on_subscribe(_GenerateSubscription(subscriber, state, self._generator, self._dispose_fn))

    def __repr__(self) -> str:
        return f"Flowable.generate({self._generator!r})"


def generate(
    state_fn: Callable[[], S],
    generator_fn: Callable[[S, Emitter[T]], S],
    dispose_fn: Callable[[S], Any] | None,
) -> Flowable[T]:
    check_sync_callable("generate", "state_fn", state_fn)
    check_sync_callable("generate", "generator_fn", generator_fn, generator=True)
    check_sync_callable("generate", "dispose_fn", dispose_fn, generator=True, none_ok=True)
    return _GenerateFlowable(state_fn, generator_fn, dispose_fn)
