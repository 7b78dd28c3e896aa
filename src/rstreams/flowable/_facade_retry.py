"""Facade methods of Flowable for retry and repeat decided by a handler or a policy (a mixin of
:class:`Flowable`; the plain ``retry(n)`` and ``repeat(n)`` are in ``_flowable.py``).

Methods here follow the same rules as ``_flowable.py``: thin, calling their operator module
through ``lazy_function`` (imported on first use), each with a docstring holding a small example
and "Backpressure:"/"Scheduler:" notes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from ._lazy import lazy_function

if TYPE_CHECKING:
    from .._spec import Publisher
    from ._flowable import Flowable
    from ._retry_policy import RetrySpec
    from .operators._retry_when import repeat_when as _i_repeat_when
    from .operators._retry_when import retry_when as _i_retry_when
else:
    _i_repeat_when = lazy_function(".operators._retry_when", "repeat_when", "_i_repeat_when", globals())
    _i_retry_when = lazy_function(".operators._retry_when", "retry_when", "_i_retry_when", globals())

__all__ = ["RetryMixin"]

T = TypeVar("T")


def _f(mixin: RetryMixin[T]) -> Flowable[T]:
    """The mixin is always a Flowable at run time (typing helper)."""
    return cast("Flowable[T]", mixin)


class RetryMixin(Generic[T]):
    __slots__ = ()

    def retry_when(self, handler: Callable[[Flowable[BaseException]], Publisher[Any]]) -> Flowable[T]:
        """Resubscribe on error as the handler decides: ``handler`` gets a Flowable of this source's
        errors and returns a Publisher; each element it emits resubscribes, its completion completes
        the stream, its error fails the stream.

        Example::

            attempts = [0]
            def flaky():
                attempts[0] += 1
                return Flowable.error(ValueError()) if attempts[0] < 3 else Flowable.just("ok")
            Flowable.defer(flaky).retry_when(lambda errors: errors.take(5)).test().assert_result("ok")

        Backpressure: unfulfilled demand carries over to the next subscription (arbiter).
        Scheduler: resubscribes on the thread where the handler's Publisher signals; trampolined
        (no stack growth with synchronous sources).
        """
        return _i_retry_when(_f(self), handler)

    def repeat_when(self, handler: Callable[[Flowable[Any]], Publisher[Any]]) -> Flowable[T]:
        """Resubscribe on completion as the handler decides: ``handler`` gets a Flowable that emits
        (the count of completions so far) each time this source completes; each element of its
        Publisher resubscribes, its completion completes the stream, its error fails it.

        Example::

            Flowable.just(1).repeat_when(lambda done: done.take_while(lambda n: n < 3)).test().assert_result(1, 1, 1)

        Backpressure: unfulfilled demand carries over to the next subscription.
        Scheduler: resubscribes on the thread where the handler's Publisher signals; trampolined.
        """
        return _i_repeat_when(_f(self), handler)

    def retry_policy(self, policy: RetrySpec) -> Flowable[T]:
        """Retry with a declarative policy from :mod:`rstreams.retry`.

        Example::

            from rstreams.retry import Retry
            ts = TestScheduler()
            f = Flowable.error(OSError("down")).retry_policy(Retry.backoff(3, 0.1).with_scheduler(ts))
            sub = f.test(); ts.advance_by(10); sub.assert_error(RetryExhaustedError)

        Backpressure: as :meth:`retry_when`.
        Scheduler: backoff delays run on the policy's scheduler (default: computation).
        """
        return _i_retry_when(_f(self), policy)
