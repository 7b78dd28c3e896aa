"""Reactive Streams rule tests (``test_rule_*``) of rstreams.testing.TestPublisher.

Their other tests (scenarios, properties, arguments) are in ``tests/testing/test_test_publisher.py``."""

from __future__ import annotations

import pytest

from rstreams import plugins
from rstreams.errors import BadRequestError
from rstreams.testing import TestPublisher, TestSubscriber
from spec._helpers import attach


def test_rule_1_9_subscribe_none_raises_type_error() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    with pytest.raises(TypeError, match=r"1\.9"):
        tp.subscribe(None)  # type: ignore[arg-type]
    tp.assert_was_not_subscribed()


def test_rule_1_1_compliant_next_beyond_demand_raises_and_emits_nothing() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = attach(tp, 2)
    with pytest.raises(
        AssertionError, match=r"Rule 1\.1 violated: TestPublisher\.next\(\) of 3 item\(s\)"
    ) as info:
        tp.next(1, 2, 3)
    assert "outstanding demand of 2" in str(info.value)
    assert "REQUEST_OVERFLOW" in str(info.value)
    ts.assert_no_values().assert_no_violations()
    tp.next(1, 2)
    ts.assert_values(1, 2)


def test_rule_2_13_compliant_next_none_raises_type_error_and_emits_nothing() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = attach(tp)
    with pytest.raises(TypeError, match=r"2\.13"):
        tp.next(1, None)  # type: ignore[arg-type]
    ts.assert_no_values().assert_no_violations()


def test_rule_1_7_compliant_publisher_refuses_signals_after_terminal() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = attach(tp)
    tp.complete()
    with pytest.raises(
        AssertionError, match=r"Rule 1\.7 violated: TestPublisher\.next\(1\) after complete\(\)"
    ):
        tp.next(1)
    with pytest.raises(
        AssertionError, match=r"Rule 1\.7 violated: TestPublisher\.complete\(\) after complete"
    ):
        tp.complete()
    with pytest.raises(AssertionError, match=r"CLEANUP_ON_TERMINATE"):
        tp.error(ValueError())
    ts.assert_result().assert_no_violations()


def test_rule_3_6_request_after_cancel_is_ignored() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = attach(tp, 1)
    sub = ts.subscription
    assert sub is not None
    sub.cancel()
    sub.cancel()  # rule 3.7: idempotent
    sub.request(10)
    assert tp.request_calls == [1, 10]  # recorded, but no demand and no subscriber
    assert tp.requested == 0
    tp.assert_no_subscribers()


@pytest.mark.parametrize("bad", [0, -1])
def test_rule_3_9_non_positive_request_signals_value_error(bad: int) -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = attach(tp, 0)
    ts.request(bad)
    ts.assert_error(ValueError, match=r"3\.9").assert_error(BadRequestError).assert_no_violations()
    tp.assert_no_subscribers()
    assert tp.request_calls == [bad]
    tp.next(1)  # nobody left to receive it
    ts.assert_no_values()


def test_rule_3_9_bad_request_inside_on_subscribe() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = attach(tp, 0)
    tp.assert_subscribers(1)  # subscribed without demand
    ts2: TestSubscriber[int] = TestSubscriber(0)
    ts2.request(-5)  # deferred, forwarded inside on_subscribe
    tp.subscribe(ts2)
    ts2.assert_error(ValueError, match=r"request\(-5\)").assert_no_violations()
    tp.assert_subscribers(1)
    ts.assert_empty()


def test_rule_2_13_subscriber_raising_is_dropped_and_reported() -> None:
    tp: TestPublisher[int] = TestPublisher.create()

    class Raising(TestSubscriber[int]):
        def on_next(self, item: int) -> None:
            raise RuntimeError(f"bad {item}")

    bad = Raising()
    good = attach(tp)
    tp.subscribe(bad)
    with plugins.collect_errors() as errors:
        tp.next(1, 2).complete()
    assert [str(e) for e in errors] == ["bad 1"]
    good.assert_result(1, 2)
    bad.assert_not_terminated()

