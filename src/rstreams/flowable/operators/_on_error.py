"""on_error_return, on_error_resume_next and on_error_complete: recover from an upstream error.

* ``on_error_return(fn)``: the upstream's error becomes one last element ``fn(error)`` and a
  completion. That element may have no demand yet when the error arrives; it is held with the
  **post-complete** idiom (seed 004): the demand counter carries a "completed" bit, so a
  ``request`` racing the error (race: request vs terminal, on two threads) emits the value exactly
  once, whichever side comes second.
* ``on_error_resume_next(fallback)``: switches to a fallback Publisher (given, or built by
  ``fallback(error)``) through a :class:`SubscriptionArbiter`, so unfulfilled demand carries over.
* ``on_error_complete(predicate)``: the error (if it matches) becomes a completion.

All three validate ``request(n)`` themselves (rule 3.9): a bad amount forwarded upstream would
come back as an upstream *error* and be "recovered" into a value or a completion.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.drain import pair_errors, post_complete, post_complete_request
from ..._internal.requests import produced, validate_request
from ..._internal.subscribers import NOOP_SUBSCRIBER, ArbiterSubscriber
from ..._spec import Publisher, Subscriber
from .._base import PassThroughSubscriber, as_flowable, none_result_error
from .._flowable import Flowable

__all__ = ["on_error_return", "on_error_resume_next", "on_error_complete"]

T = TypeVar("T")


def _both(op: str, original: BaseException, raised: BaseException) -> BaseException:
    """The original error and the one the user's handler raised, as one ExceptionGroup."""
    return pair_errors(original, raised, f"{op}(): the error handler raised while handling an error")


class _ValidatingSubscriber(PassThroughSubscriber[T]):
    """Passes elements through; validates request amounts before forwarding them (rule 3.9)."""

    __slots__ = ()

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self.upstream.cancel()
                if not self.done:
                    self.done = True
                    d = self.downstream
                    self.downstream = NOOP_SUBSCRIBER  # rule 3.13
                    d.on_error(err)
                return
        self.upstream.request(n)

    def cancel(self) -> None:
        self.upstream.cancel()
        self.downstream = NOOP_SUBSCRIBER  # rule 3.13


class HoldLastSubscriber(_ValidatingSubscriber[T]):
    """Passes elements through, then emits one last element held after the upstream terminated
    (``on_error_return``'s fallback value, ``materialize``'s terminal notification) when demand
    allows: the post-complete idiom, the demand and the completed bit share ``_requested`` (race:
    request vs the terminal signal). ``_emitted`` counts what passed through (only the upstream's
    serial ``on_next`` touches it), so the held element waits for demand of its own."""

    __slots__ = ("_emitted", "_requested", "_queue", "_cancelled", "_bad")

    def __init__(self, downstream: Subscriber[Any]) -> None:
        super().__init__(downstream)
        self._emitted = 0
        self._requested = AtomicInt(0)  # demand + COMPLETED bit (race: request vs the terminal signal)
        self._queue: deque[Any] = deque()
        self._cancelled = False
        # rule 3.9 while the last element is held: delivered once by the drain owner
        self._bad: AtomicRef[BaseException | None] = AtomicRef(None)

    def _hold_last(self, last: Any) -> None:
        """The upstream terminated: emit ``last`` when requested, then complete."""
        self.done = True
        e = self._emitted
        if e:
            produced(self._requested, e)
        self._queue.append(last)
        post_complete(self.downstream, self._queue, self._requested, self._is_cancelled)

    def _is_cancelled(self) -> bool:
        # called by the post-complete drain owner only: it drops the held element (cancel() must not
        # clear the queue itself; race: a drain on another thread between its "queue not empty"
        # check and its popleft would raise IndexError, or complete after the cancel)
        if self._cancelled:
            self._queue.clear()
            err = self._bad.get_and_set(None)
            if err is not None:
                self.downstream.on_error(err)  # rule 3.9: instead of the held element
            return True
        return False

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None and self.done:
                # rule 3.9 while the last element is held: the held element is dropped and the
                # error goes out through the post-complete drain's owner (race: a request or the
                # terminal signal draining on another thread; the drain checks before each signal)
                self._bad.set(err)
                self._cancelled = True
                post_complete_request(1, self.downstream, self._queue, self._requested, self._is_cancelled)
                return
            super().request(n)  # rule 3.9 before the upstream terminated
            return
        if post_complete_request(n, self.downstream, self._queue, self._requested, self._is_cancelled):
            self.upstream.request(n)

    def cancel(self) -> None:
        self._cancelled = True
        super().cancel()


# ---------------------------------------------------------------------------------------------
# on_error_return


@final
class _OnErrorReturnSubscriber(HoldLastSubscriber[T]):
    __slots__ = ("_fn",)

    def __init__(self, downstream: Subscriber[T], fn: Callable[[BaseException], T]) -> None:
        super().__init__(downstream)
        self._fn = fn

    def on_next(self, item: T) -> None:
        if self.done:
            return  # rule 1.7: nothing after the fallback value or the completion
        self._emitted += 1
        self.downstream.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if self.done:
            plugins.on_error(error, "on_error_return: on_error after termination")
            return
        try:
            v = self._fn(error)
        except Exception as ex:
            super().on_error(_both("on_error_return", error, ex))
            return
        if v is None:
            super().on_error(none_result_error("on_error_return", "the function"))
            return
        self._hold_last(v)


@final
class _OnErrorReturnFlowable(Flowable[T]):
    __slots__ = ("_source", "_fn")

    def __init__(self, source: Flowable[T], fn: Callable[[BaseException], T]) -> None:
        self._source = source
        self._fn = fn

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_OnErrorReturnSubscriber(subscriber, self._fn))


def on_error_return(source: Flowable[T], fn: Callable[[BaseException], T]) -> Flowable[T]:
    if not callable(fn):
        raise TypeError(f"on_error_return(): expected a callable, got {type(fn).__name__}")
    return _OnErrorReturnFlowable(source, fn)


# ---------------------------------------------------------------------------------------------
# on_error_resume_next


@final
class _ResumeSubscriber(ArbiterSubscriber):
    __slots__ = ("_fallback", "_switched")

    def __init__(self, downstream: Subscriber[Any], fallback: Any, is_publisher: bool) -> None:
        super().__init__(downstream)
        self._fallback = fallback if is_publisher else None
        self._switched: Callable[[BaseException], Any] | None = None if is_publisher else fallback

    def on_error(self, error: BaseException) -> None:
        if self._terminated:  # a faulty upstream's error after its completion: never resume then
            plugins.on_error(error, "on_error_resume_next: on_error after termination")
            return
        fb = self._fallback
        fn = self._switched
        if fb is None and fn is None:  # already switched: the fallback's own error goes through
            self.error_downstream(error)
            return
        self._fallback = None
        self._switched = None
        if self.is_cancelled:
            plugins.on_error(error, "on_error_resume_next: error after cancellation")
            return
        if fn is not None:
            try:
                fb = fn(error)
            except Exception as ex:
                self.error_downstream(_both("on_error_resume_next", error, ex))
                return
            if fb is None:
                self.error_downstream(none_result_error("on_error_resume_next", "the fallback function"))
                return
            if not callable(getattr(fb, "subscribe", None)):
                self.error_downstream(
                    TypeError(f"on_error_resume_next(): the fallback function returned a {type(fb).__name__}, "
                              "not a Publisher")
                )
                return
            # a foreign Publisher gets from_publisher's guard (rule 2.13: its None element used to
            # reach the downstream), as a fallback Publisher given directly does (as_flowable)
            fb = as_flowable("on_error_resume_next", fb)
        self.account()
        if fb is not None:
            fb.subscribe(self)


@final
class _ResumeFlowable(Flowable[T]):
    __slots__ = ("_source", "_fallback", "_is_publisher")

    def __init__(self, source: Flowable[T], fallback: Any, is_publisher: bool) -> None:
        self._source = source
        self._fallback = fallback
        self._is_publisher = is_publisher

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        s = _ResumeSubscriber(subscriber, self._fallback, self._is_publisher)
        subscriber.on_subscribe(s)
        if not s.is_cancelled:
            self._source.subscribe(s)


def on_error_resume_next(
    source: Flowable[T], fallback: Callable[[BaseException], Publisher[T]] | Publisher[T]
) -> Flowable[T]:
    if fallback is None:
        raise TypeError("on_error_resume_next(): fallback is None; expected a Publisher or a callable")
    if callable(getattr(fallback, "subscribe", None)):
        return _ResumeFlowable(source, as_flowable("on_error_resume_next", fallback), True)
    if callable(fallback):
        return _ResumeFlowable(source, fallback, False)
    raise TypeError(
        f"on_error_resume_next(): expected a Publisher or a callable returning one, got {type(fallback).__name__}"
    )


# ---------------------------------------------------------------------------------------------
# on_error_complete


@final
class _OnErrorCompleteSubscriber(_ValidatingSubscriber[T]):
    __slots__ = ("_predicate",)

    def __init__(self, downstream: Subscriber[T], predicate: Callable[[BaseException], object] | None) -> None:
        super().__init__(downstream)
        self._predicate = predicate

    def on_error(self, error: BaseException) -> None:
        if self.done:
            plugins.on_error(error, "on_error_complete: on_error after termination")
            return
        p = self._predicate
        if p is not None:
            try:
                ok = p(error)
            except Exception as ex:
                super().on_error(_both("on_error_complete", error, ex))
                return
            if not ok:
                super().on_error(error)
                return
        self.on_complete()


@final
class _OnErrorCompleteFlowable(Flowable[T]):
    __slots__ = ("_source", "_predicate")

    def __init__(self, source: Flowable[T], predicate: Callable[[BaseException], object] | None) -> None:
        self._source = source
        self._predicate = predicate

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_OnErrorCompleteSubscriber(subscriber, self._predicate))


def on_error_complete(source: Flowable[T], predicate: Callable[[BaseException], object] | None = None) -> Flowable[T]:
    if predicate is not None and not callable(predicate):
        raise TypeError(f"on_error_complete(): predicate must be callable, got {type(predicate).__name__}")
    return _OnErrorCompleteFlowable(source, predicate)
