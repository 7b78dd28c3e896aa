"""publish(selector): one shared view per subscription, the source subscribed once and after the
selector's Publisher, cancelled when that Publisher ends or the downstream cancels; errors, demand,
rules and bad arguments. The connectable publish() has its own tests (test_multicast.py)."""

from __future__ import annotations

from typing import Any

import pytest

from operators.harness import Boom, check_raising, check_scenarios, run_one_by_one
from rstreams import ConnectableFlowable, Flowable, NoneElementError
from rstreams.testing import TestPublisher, TestSubscriber


def test_publish_selector_scenarios() -> None:
    check_scenarios(lambda f: f.publish(lambda v: v.map(lambda x: x * 2)), range(7), lambda d: [x * 2 for x in d])


def test_publish_selector_zip_with_itself_subscribes_the_source_once() -> None:
    for src in (Flowable.range(0, 5), Flowable.range(0, 5).hide()):
        subscriptions: list[Any] = []
        f = src.do_on_subscribe(subscriptions.append).publish(lambda v: v.zip_with(v.skip(1)))
        f.test().assert_result((0, 1), (1, 2), (2, 3), (3, 4)).assert_no_violations()
        assert len(subscriptions) == 1
        f.test().assert_result((0, 1), (1, 2), (2, 3), (3, 4)).assert_no_violations()
        assert len(subscriptions) == 2  # a fresh view per subscription


def test_publish_selector_one_at_a_time_is_lockstep() -> None:
    f = Flowable.range(0, 6).hide().publish(lambda v: Flowable.merge(v.filter(lambda x: x % 2 == 0), v.filter(lambda x: x % 2 == 1)))
    ts = run_one_by_one(f)
    assert sorted(ts.values) == list(range(6))
    ts.assert_complete().assert_no_violations()


def test_publish_selector_source_prefetch_is_bounded() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_publisher(tp).publish(lambda v: v, prefetch=4).subscribe(ts)
    assert tp.request_calls == [4]
    tp.next(1, 2, 3, 4)
    ts.request(3)
    ts.assert_values(1, 2, 3)
    assert tp.request_calls == [4, 3]  # replenished at 75%
    tp.complete()
    ts.request(1)
    ts.assert_result(1, 2, 3, 4).assert_no_violations()


def test_publish_selector_result_ending_cancels_the_source() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(tp).publish(lambda v: v.take(2)).test()
    tp.next(1, 2)
    tp.assert_was_cancelled()
    ts.assert_result(1, 2).assert_no_violations()
    tp2: TestPublisher[int] = TestPublisher.create()
    Flowable.from_publisher(tp2).publish(lambda v: Flowable.just(9)).test().assert_result(9).assert_no_violations()
    tp2.assert_was_cancelled()


def test_publish_selector_source_error_reaches_the_result() -> None:
    ts = Flowable.just(1).concat_with(Flowable.error(Boom())).publish(lambda v: v.zip_with(v)).test()
    ts.assert_values((1, 1)).assert_error(Boom).assert_no_violations()


def test_publish_selector_raising_selector_and_bad_results() -> None:
    def boom(v: Flowable[int]) -> Flowable[int]:
        raise Boom()

    subscribed: list[Any] = []
    src = Flowable.range(0, 3).do_on_subscribe(subscribed.append)
    src.publish(boom).test().assert_error(Boom).assert_no_violations()
    src.publish(lambda v: None).test().assert_error(NoneElementError).assert_no_violations()  # type: ignore[arg-type, return-value]
    src.publish(lambda v: [1]).test().assert_error(TypeError, match="not a Publisher").assert_no_violations()  # type: ignore[arg-type, return-value]
    assert not subscribed  # the source is not subscribed when the selector fails


def test_publish_selector_raising_user_function_inside_cancels_the_source() -> None:
    def bad(x: int) -> int:
        raise Boom(x)

    check_raising(lambda f: f.publish(lambda v: v.map(bad)), range(4))


def test_publish_without_selector_is_still_connectable() -> None:
    cf = Flowable.range(0, 2).publish()
    assert isinstance(cf, ConnectableFlowable)
    ts = cf.test()
    cf.connect()
    ts.assert_result(0, 1).assert_no_violations()


def test_publish_selector_bad_arguments() -> None:
    with pytest.raises(TypeError, match="selector must be callable"):
        Flowable.just(1).publish(3)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="prefetch must be > 0"):
        Flowable.just(1).publish(lambda v: v, prefetch=0)
    with pytest.raises(ValueError, match="prefetch applies only with a selector"):
        Flowable.just(1).publish(prefetch=5)  # type: ignore[call-overload]
