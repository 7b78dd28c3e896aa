"""Reactive Streams rule tests (``test_rule_*``) of the synchronous operators, fused and behind hide().

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_sync_operators_fused_and_hidden.py``."""

from __future__ import annotations

from typing import Any

import pytest

from operators.test_sync_operators_fused_and_hidden import AGGREGATES, MAX, Op, _CancelOnFirst, sources
from rstreams import Flowable, plugins
from rstreams.testing import TestPublisher, TestSubscriber
from rstreams.testing._test_publisher import Violation

AFTER_TERMINAL_OPS: dict[str, Op] = {
    "skip": lambda f: f.skip(1),
    "skip_while": lambda f: f.skip_while(lambda x: False),
    "on_error_return": lambda f: f.on_error_return(lambda e: -1),
    "on_error_complete": lambda f: f.on_error_complete(),
    "do_on_error": lambda f: f.do_on_error(lambda e: None),
    "do_on_complete": lambda f: f.do_on_complete(lambda: None),
    "do_on_request": lambda f: f.do_on_request(lambda n: None),
    "do_on_cancel": lambda f: f.do_on_cancel(lambda: None),
    "do_finally": lambda f: f.do_finally(lambda: None),
    "on_error_resume_next": lambda f: f.on_error_resume_next(Flowable.just(-1)),
    "retry": lambda f: f.retry(3),
    "repeat": lambda f: f.repeat(3),
    "take_last": lambda f: f.take_last(5),
}


@pytest.mark.parametrize("name", sorted(AFTER_TERMINAL_OPS))
def test_rule_1_7_nothing_after_completion_from_a_faulty_upstream(name: str) -> None:
    subscribed: list[int] = []
    with plugins.collect_errors() as undeliverable:
        tp: TestPublisher[int] = TestPublisher.create_noncompliant(
            Violation.CLEANUP_ON_TERMINATE, Violation.REQUEST_OVERFLOW
        )
        ts: TestSubscriber[int] = TestSubscriber()
        src = Flowable.defer(lambda: subscribed.append(1) or tp)  # type: ignore[func-returns-value]
        AFTER_TERMINAL_OPS[name](src).subscribe(ts)
        tp.next(0, 1)
        tp.complete()
        count = len(subscribed)
        tp.next(5)
        tp.error(KeyError("late"))
    assert 5 not in ts.values
    assert ts.completions == 1
    ts.assert_no_errors().assert_no_violations()
    assert len(subscribed) == count, "resubscribed after the stream ended"
    assert any(isinstance(e, KeyError) for e in undeliverable), "the late error was lost"


@pytest.mark.parametrize("name", ["skip", "skip_while", "on_error_return", "on_error_complete", "do_finally"])
def test_rule_1_7_nothing_after_an_error_from_a_faulty_upstream(name: str) -> None:
    with plugins.collect_errors() as undeliverable:
        tp: TestPublisher[int] = TestPublisher.create_noncompliant(
            Violation.CLEANUP_ON_TERMINATE, Violation.REQUEST_OVERFLOW
        )
        ts: TestSubscriber[int] = TestSubscriber()
        AFTER_TERMINAL_OPS[name](Flowable.from_publisher(tp)).subscribe(ts)
        tp.next(0, 1)
        tp.error(ValueError("first"))
        tp.next(5)
        tp.error(KeyError("late"))
    assert 5 not in ts.values
    assert ts.is_terminated
    ts.assert_no_violations()
    assert any(isinstance(e, KeyError) for e in undeliverable), "the late error was lost"


@pytest.mark.parametrize(
    "op",
    [
        lambda f: f.take(1),
        lambda f: f.take_until(lambda x: True),
        lambda f: f.take_until(lambda x: False),
        lambda f: f.first(),
        lambda f: f.buffer(1),
        lambda f: f.concat_with(Flowable.just(1)),
        lambda f: f.scan(lambda a, b: a + b, 0),
    ],
    ids=["take", "take_until true", "take_until false", "first", "buffer", "concat_with", "scan seed"],
)
@pytest.mark.parametrize("data", [[0], [0, 1]])
def test_rule_1_8_cancel_inside_the_last_on_next_stops_every_signal(op: Op, data: list[int]) -> None:
    # the fused driver stops at once; the unfused take/take_until completed after the cancel
    for _name, src in sources(data)[:2]:
        ts = _CancelOnFirst()
        op(src).subscribe(ts)
        ts.assert_value_count(1).assert_no_errors().assert_not_complete().assert_no_violations()


@pytest.mark.parametrize("initial", [MAX, 5])
def test_rule_3_12_no_mapper_call_after_a_cancel_from_inside_on_next(initial: int) -> None:
    # RxJava: once the subscriber cancelled in onNext the source emits nothing more, so the
    # mapper never sees another element; the fused loop used to pull the chain once more
    for name, src in sources([1, 2, 3]) + [("range", Flowable.range(1, 3)), ("hidden range", Flowable.range(1, 3).hide())]:
        calls: list[int] = []

        class Sub(TestSubscriber[Any]):
            def on_next(self, item: Any) -> None:
                super().on_next(item)
                self.cancel()

        ts = Sub(initial)
        src.map(lambda x, calls=calls: calls.append(x) or x).subscribe(ts)
        ts.assert_values(1).assert_not_complete().assert_no_errors().assert_no_violations()
        assert calls == [1], f"{name}: mapper called for {calls}"


@pytest.mark.parametrize("name", sorted(AGGREGATES))
def test_rule_1_1_single_valued_results_wait_for_demand(name: str) -> None:
    op, want = AGGREGATES[name]
    for _src_name, src in sources([1, 2, 3]):
        ts: TestSubscriber[Any] = TestSubscriber(0)
        op(src).subscribe(ts)
        ts.assert_no_values().assert_not_complete().assert_no_errors()
        ts.request(1)
        ts.assert_result(want).assert_no_violations()


@pytest.mark.parametrize(
    "op",
    [lambda f: f.retry_when(lambda errors: errors), lambda f: f.repeat_when(lambda done: done.take(1))],
    ids=["retry_when", "repeat_when"],
)
def test_rule_1_7_when_operators_after_termination(op: Op) -> None:
    with plugins.collect_errors() as undeliverable:
        tp: TestPublisher[int] = TestPublisher.create_noncompliant(
            Violation.CLEANUP_ON_TERMINATE, Violation.REQUEST_OVERFLOW, Violation.DEFER_CANCELLATION
        )
        ts: TestSubscriber[int] = TestSubscriber()
        op(Flowable.from_publisher(tp)).subscribe(ts)
        tp.next(1)
        tp.complete()
        tp.next(2)
        tp.error(KeyError("late"))
    ts.assert_values(1).assert_no_violations()
    assert ts.is_terminated
    assert any(isinstance(e, KeyError) for e in undeliverable), "the late error was lost"


def test_rule_1_1_take_limits_upstream_requests_to_n() -> None:
    # RxJava 3: take(n) never asks its upstream for more than n in total
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(2)
    Flowable.from_publisher(tp).take(3).subscribe(ts)
    ts.request(MAX)
    assert tp.request_calls == [2, 1]
    tp.next(1, 2, 3)
    ts.assert_result(1, 2, 3).assert_no_violations()
    assert tp.was_cancelled

