"""Reactive Streams rule tests (``test_rule_*``) of accept_upstream (rstreams.flowable._base), the
``on_subscribe`` of the operators that hold ``_upstream``/``_downstream``/``_cancelled``."""

from __future__ import annotations

from typing import Any

from rstreams._internal.subscriptions import CANCELLED
from rstreams.flowable._base import accept_upstream


class _Sub:
    def __init__(self) -> None:
        self.requests: list[int] = []
        self.cancelled = False

    def request(self, n: int) -> None:
        self.requests.append(n)

    def cancel(self) -> None:
        self.cancelled = True


class _Down:
    def __init__(self, cancel_at_subscribe: bool = False) -> None:
        self.subscriptions: list[Any] = []
        self._cancel = cancel_at_subscribe

    def on_subscribe(self, s: Any) -> None:
        self.subscriptions.append(s)
        if self._cancel:
            s.cancel()


class _Op:
    def __init__(self, downstream: _Down | None) -> None:
        self._upstream: Any = CANCELLED
        self._downstream = downstream
        self._cancelled = False

    def cancel(self) -> None:
        self._cancelled = True


def test_the_first_subscription_is_kept_passed_down_and_prefetched() -> None:
    down = _Down()
    op = _Op(down)
    up = _Sub()
    assert accept_upstream(op, up, 16) is True
    assert op._upstream is up
    assert down.subscriptions == [op]
    assert up.requests == [16] and not up.cancelled


def test_rule_2_5_a_second_subscription_is_cancelled_and_nothing_else_happens() -> None:
    down = _Down()
    op = _Op(down)
    first, second = _Sub(), _Sub()
    accept_upstream(op, first, 4)
    assert accept_upstream(op, second, 4) is False
    assert second.cancelled and second.requests == []
    assert op._upstream is first and down.subscriptions == [op]


def test_a_cancel_from_the_downstreams_on_subscribe_means_no_prefetch() -> None:
    down = _Down(cancel_at_subscribe=True)
    op = _Op(down)
    up = _Sub()
    accept_upstream(op, up, 8)
    assert op._cancelled and up.requests == []


def test_a_downstream_already_gone_is_not_called() -> None:
    op = _Op(None)
    up = _Sub()
    assert accept_upstream(op, up, 2) is True
    assert up.requests == [2]
