"""Declarative retry policies (Reactor's ``Retry``): the policy objects and the handler they are.

They live in the flowable layer because a policy *is* a ``retry_when`` handler (``__call__`` builds
the Flowable of retry decisions) and ``Flowable.retry(policy)`` recognises one; the public module
is :mod:`rstreams.retry`, which re-exports these names and documents them (backoff formula,
exhaustion, filters).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import RStreamsError

if TYPE_CHECKING:
    from .._spec import Publisher
    from ..schedulers import Scheduler
    from ._flowable import Flowable

__all__ = ["Retry", "RetrySpec", "RetrySignal", "RetryExhaustedError"]


class RetrySignal(NamedTuple):
    """What a policy knows when deciding: the retries done so far and the error at hand.

    Example::

        spec = Retry.max(2).on_retry_exhausted(
            lambda sig: TimeoutError(f"gave up after {sig.total_retries}: {sig.failure!r}"))
        Flowable.error(OSError("down")).retry_policy(spec).test().assert_error(TimeoutError)
        # TimeoutError("gave up after 2: OSError('down')")
    """

    total_retries: int
    failure: BaseException


class RetryExhaustedError(RStreamsError):
    """The retry policy used up its attempts; ``__cause__`` is the last error."""

    # its public name (tracebacks, pickle): rstreams.retry re-exports it
    __module__ = "rstreams.retry"

    def __init__(self, attempts: int, last: BaseException) -> None:
        self.attempts = attempts
        self.last = last
        super().__init__(
            f"retries exhausted: {attempts}/{attempts}; last error: {type(last).__name__}: {last}"
        )
        self.__cause__ = last

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle/copy (process pools, Spark executors): the constructor takes (attempts, last)
        return (type(self), (self.attempts, self.last), self.__dict__)


def _default_filter(error: BaseException) -> bool:
    return isinstance(error, Exception)


@dataclass(frozen=True)
class RetrySpec:
    """A retry policy; build it with :class:`Retry`. Calling it with a Flowable of errors returns the
    Publisher that ``retry_when`` expects.

    Example::

        spec = Retry.backoff(4, 0.1, jitter=0.0)
        [spec.delay_for(k) for k in (1, 2, 3)]       # [0.1, 0.2, 0.4]
        Flowable.defer(flaky).retry_when(spec)      # the same as .retry_policy(spec)
    """

    max_attempts: int
    min_backoff: float = 0.0
    max_backoff: float | None = None
    jitter: float = 0.0
    multiplier: float = 2.0
    predicate: Callable[[BaseException], object] = _default_filter
    exhausted: Callable[[RetrySignal], BaseException] | None = None
    scheduler: Scheduler | None = None
    rng: random.Random | None = None

    # -- builders --------------------------------------------------------------------------------
    def filter(self, predicate: Callable[[BaseException], object]) -> RetrySpec:
        """Retry only the errors for which ``predicate(error)`` is true; others fail the stream as is."""
        if not callable(predicate):
            raise TypeError(f"RetrySpec.filter(): predicate must be callable, got {type(predicate).__name__}")
        return replace(self, predicate=predicate)

    def on_retry_exhausted(self, fn: Callable[[RetrySignal], BaseException]) -> RetrySpec:
        """Signal ``fn(signal)`` instead of :class:`RetryExhaustedError` when the retries are used up."""
        if not callable(fn):
            raise TypeError(f"RetrySpec.on_retry_exhausted(): fn must be callable, got {type(fn).__name__}")
        return replace(self, exhausted=fn)

    def with_scheduler(self, scheduler: Scheduler) -> RetrySpec:
        """Run the backoff delays on ``scheduler`` (a TestScheduler in tests)."""
        from ..schedulers import Scheduler as _Scheduler

        if not isinstance(scheduler, _Scheduler):
            raise TypeError(
                f"RetrySpec.with_scheduler(): expected a Scheduler, got {type(scheduler).__name__}"
            )
        return replace(self, scheduler=scheduler)

    def with_random(self, rng: random.Random) -> RetrySpec:
        """Draw the jitter from ``rng`` (seed it for reproducible delays)."""
        return replace(self, rng=rng)

    # -- the policy ------------------------------------------------------------------------------
    def delay_for(self, retry: int) -> float:
        """The delay in seconds before retry number ``retry`` (1-based)."""
        if self.min_backoff <= 0:
            return 0.0  # no backoff to grow (Reactor: a zero backoff retries at once)
        hi = self.max_backoff if self.max_backoff is not None else math.inf
        try:
            growth = self.multiplier ** (retry - 1)
        except OverflowError:  # retry ~1000+ with multiplier 2: the cap applies (Reactor's overflow rule)
            growth = math.inf
        d = min(self.min_backoff * growth, hi)
        if math.isinf(d):
            return d  # no max_backoff and an overflowing growth: never again (no jitter around inf)
        if self.jitter > 0:
            offset = d * self.jitter
            low = max(self.min_backoff - d, -offset)
            high = min(hi - d, offset)
            r = self.rng if self.rng is not None else random
            d = d + r.uniform(low, high) if high > low else d
        return max(0.0, d)

    def exhausted_error(self, signal: RetrySignal) -> BaseException:
        fn = self.exhausted
        if fn is not None:
            return fn(signal)
        return RetryExhaustedError(signal.total_retries, signal.failure)

    def __call__(self, errors: Flowable[BaseException]) -> Publisher[Any]:
        from ._flowable import Flowable

        retries = [0]  # this subscription's count (the handler is called once per subscription)

        def decide(error: BaseException) -> Flowable[Any]:
            if not self.predicate(error):
                return Flowable.error(error)
            n = retries[0]
            if n >= self.max_attempts:
                return Flowable.error(self.exhausted_error(RetrySignal(n, error)))
            retries[0] = n + 1
            d = self.delay_for(n + 1)
            if d <= 0:
                return Flowable.just(n + 1)
            return Flowable.timer(d, self.scheduler)

        return errors.concat_map(decide)


class Retry:
    """Factories of :class:`RetrySpec`.

    Example::

        Flowable.defer(flaky).retry_policy(Retry.max(3))                # at once, up to 3 times
        Flowable.defer(flaky).retry_policy(Retry.fixed_delay(3, 0.5))   # 0.5 s before each retry
        Retry.backoff(5, 0.1, max_backoff=2.0).filter(lambda e: isinstance(e, OSError))
    """

    @staticmethod
    def max(max_attempts: int) -> RetrySpec:
        """Retry at once, at most ``max_attempts`` times.

        Example::

            Flowable.defer(flaky).retry_policy(Retry.max(3))
        """
        return RetrySpec(_check_attempts("Retry.max", max_attempts))

    @staticmethod
    def fixed_delay(max_attempts: int, delay: float) -> RetrySpec:
        """Retry at most ``max_attempts`` times, waiting ``delay`` seconds before each retry."""
        d = _check_seconds("Retry.fixed_delay", delay, "delay")
        return RetrySpec(_check_attempts("Retry.fixed_delay", max_attempts), d, d, 0.0, 1.0)

    @staticmethod
    def backoff(
        max_attempts: int,
        min_backoff: float,
        max_backoff: float | None = None,
        jitter: float = 0.5,
        multiplier: float = 2.0,
    ) -> RetrySpec:
        """Retry at most ``max_attempts`` times with exponential backoff and jitter.

        Example::

            Flowable.defer(call_service).retry_policy(Retry.backoff(5, 0.1, max_backoff=2.0))
        """
        op = "Retry.backoff"
        lo = _check_seconds(op, min_backoff, "min_backoff")
        hi = None if max_backoff is None else _check_seconds(op, max_backoff, "max_backoff")
        if hi is not None and hi < lo:
            raise ValueError(f"{op}(): max_backoff ({hi}) must be >= min_backoff ({lo})")
        if isinstance(jitter, bool) or not isinstance(jitter, int | float) or not 0 <= jitter <= 1:
            raise ValueError(f"{op}(): jitter must be a number in [0, 1], got {jitter!r}")
        if isinstance(multiplier, bool) or not isinstance(multiplier, int | float) or not multiplier >= 1:
            raise ValueError(f"{op}(): multiplier must be a number >= 1, got {multiplier!r}")
        return RetrySpec(_check_attempts(op, max_attempts), lo, hi, float(jitter), float(multiplier))


def _check_attempts(op: str, n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{op}(): max_attempts must be an int, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"{op}(): max_attempts must be >= 0, got {n}")
    return n


def _check_seconds(op: str, d: object, name: str) -> float:
    if isinstance(d, bool) or not isinstance(d, int | float):
        raise TypeError(f"{op}(): {name} must be a number of seconds, got {type(d).__name__}")
    if not d >= 0:
        raise ValueError(f"{op}(): {name} must be >= 0, got {d!r}")
    return float(d)
