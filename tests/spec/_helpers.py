"""Helpers shared by test modules outside a package (tests/time, tests/testing) and their rule-level
tests here (``test_rule_*``, tests/spec), one section per module."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

import pytest

from rstreams import Flowable
from rstreams._spec import MAX_DEMAND
from rstreams.testing import TestPublisher, TestScheduler, TestSubscriber

# -----------------------------------------------------------------------------------------------
# tests/testing/test_test_publisher.py


def attach(
    tp: TestPublisher[int], initial_request: int = MAX_DEMAND, tag: str | None = None
) -> TestSubscriber[int]:
    ts: TestSubscriber[int] = TestSubscriber(initial_request, tag=tag)
    tp.subscribe(ts)
    return ts


# -----------------------------------------------------------------------------------------------
# tests/testing/test_test_subscriber.py


class RecordingSubscription:
    """A Subscription that records calls; ``on_request`` runs inside ``request`` (after recording)."""

    def __init__(self, on_request: Callable[[int], None] | None = None) -> None:
        self.requests: list[int] = []
        self.cancels = 0
        self._on_request = on_request
        self._lock = threading.Lock()

    def request(self, n: int) -> None:
        with self._lock:
            self.requests.append(n)
        if self._on_request is not None:
            self._on_request(n)

    def cancel(self) -> None:
        self.cancels += 1


def subscribed(initial_request: int = MAX_DEMAND, tag: str | None = None) -> TestSubscriber[object]:
    ts: TestSubscriber[object] = TestSubscriber(initial_request, tag=tag)
    ts.on_subscribe(RecordingSubscription())
    return ts


def fails(fn: Callable[[], object], *fragments: str) -> str:
    """Run ``fn``, expect an AssertionError whose message contains every fragment; return it."""
    with pytest.raises(AssertionError) as info:
        fn()
    msg = str(info.value)
    for f in fragments:
        assert f in msg, f"{f!r} not in failure message:\n{msg}"
    return msg


def rules_of(ts: TestSubscriber[object] | TestSubscriber[int]) -> list[str]:
    return [re.match(r"Rule (\d\.\d+) violated", v).group(1) for v in ts.violations]  # type: ignore[union-attr]


# -----------------------------------------------------------------------------------------------
# tests/time/test_retry_when_policy.py


def _failing(
    times: int, then: list[int], counter: list[int], values_before: list[int] | None = None
) -> Flowable[int]:
    """Fails the first ``times`` subscriptions (after emitting ``values_before``), then emits ``then``."""

    def make() -> Flowable[int]:
        counter[0] += 1
        if counter[0] <= times:
            return Flowable.concat(
                Flowable.from_iterable(values_before or []), Flowable.error(OSError(f"#{counter[0]}"))
            )
        return Flowable.from_iterable(then)

    return Flowable.defer(make)


# -----------------------------------------------------------------------------------------------
# tests/time/test_sample_debounce_delay_selectors.py


def _pair() -> tuple[TestPublisher[int], TestPublisher[str]]:
    return TestPublisher.create(), TestPublisher.create()


# -----------------------------------------------------------------------------------------------
# tests/time/test_time_schedulers_and_operators.py


def _src(
    op: Callable[[Flowable[int], TestScheduler], Flowable[Any]], request: int = 2**63 - 1
) -> tuple[TestScheduler, TestPublisher[int], TestSubscriber[Any]]:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub: TestSubscriber[Any] = TestSubscriber(request)
    op(Flowable.from_publisher(tp), ts).subscribe(sub)
    return ts, tp, sub


# -----------------------------------------------------------------------------------------------
# tests/time/test_time_throttle.py


def _setup(op: Any) -> tuple[TestScheduler, TestPublisher[int], Any]:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = op(Flowable.from_publisher(tp), ts).test()
    return ts, tp, sub

