"""Declarative retry policies (in the style of Reactor's ``Retry``), used with
``Flowable.retry_policy(policy)`` or ``Flowable.retry_when(policy)``.

Example::

    from rstreams.retry import Retry

    flaky.retry_policy(Retry.max(3))                                  # resubscribe up to 3 times
    flaky.retry_policy(Retry.backoff(5, min_backoff=0.1, max_backoff=2.0).filter(
        lambda e: isinstance(e, OSError)))                             # exponential backoff, only OSError

A policy is immutable: every method returns a new one. It counts the retries of one subscription
(each subscriber of the retried Flowable gets its own count). When the retries are used up, the
stream fails with :class:`RetryExhaustedError` whose ``__cause__`` is the last error (or with whatever
``on_retry_exhausted(fn)`` returns). An error rejected by ``filter`` is signalled as it is. Only
``Exception`` subclasses are retried by default (``KeyboardInterrupt``/``SystemExit`` never are).

Backoff delay before retry ``k`` (1-based): ``min_backoff * multiplier ** (k - 1)``, capped at
``max_backoff``, plus a jitter drawn uniformly from ``[-jitter * d, +jitter * d]`` and clamped to
``[min_backoff, max_backoff]`` (Reactor's formula). Delays run on the policy's scheduler (default:
computation; use :class:`~rstreams.testing.TestScheduler` in tests) and the jitter's randomness can be
seeded with ``with_random(random.Random(seed))``.
"""

from __future__ import annotations

from .flowable.lowlevel import Retry, RetryExhaustedError, RetrySignal, RetrySpec

__all__ = ["Retry", "RetrySpec", "RetrySignal", "RetryExhaustedError"]
