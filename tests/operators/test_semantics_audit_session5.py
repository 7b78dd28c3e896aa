"""Session 5: the leftovers of the session 4 audit (flat_map after its outer completed, zip with an
empty source). Every test subscribes through TestSubscriber and ends with assert_no_violations()."""

from __future__ import annotations

from rstreams import Flowable
from rstreams.testing import TestPublisher, TestSubscriber


def test_rule_2_4_flat_map_does_not_cancel_an_outer_that_completed() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inner: TestPublisher[str] = TestPublisher.create()
    ts: TestSubscriber[str] = Flowable.from_publisher(outer).flat_map(lambda _: inner).test()
    outer.next(1).complete()
    inner.next("a").complete()
    ts.assert_result("a").assert_no_violations()
    outer.assert_not_cancelled()
    inner.assert_not_cancelled()


def test_rule_2_4_flat_map_does_not_cancel_an_outer_that_failed_with_delay_error() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inner: TestPublisher[str] = TestPublisher.create()
    ts: TestSubscriber[str] = Flowable.from_publisher(outer).flat_map(lambda _: inner, delay_error=True).test()
    outer.next(1).error(ValueError("outer"))
    inner.next("a").complete()
    ts.assert_values("a").assert_error(ValueError).assert_no_violations()
    outer.assert_not_cancelled()


def test_flat_map_inner_error_still_cancels_a_live_outer() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inner: TestPublisher[str] = TestPublisher.create()
    ts: TestSubscriber[str] = Flowable.from_publisher(outer).flat_map(lambda _: inner).test()
    outer.next(1)
    inner.error(KeyError("inner"))
    ts.assert_failure(KeyError).assert_no_violations()
    outer.assert_was_cancelled()


def test_zip_with_a_leading_empty_source_still_subscribes_and_cancels_the_rest() -> None:
    # RxJava subscribes every source; the ones after the zip ended are cancelled at once.
    subscribed: list[str] = []
    other: TestPublisher[int] = TestPublisher.create()
    src = Flowable.from_publisher(other).do_on_subscribe(lambda _s: subscribed.append("other"))
    ts: TestSubscriber[tuple[int, int]] = Flowable.zip(Flowable.empty(), src).test()
    ts.assert_result().assert_no_violations()
    assert subscribed == ["other"]
    other.assert_was_cancelled()


def test_zip_does_not_subscribe_the_rest_after_a_downstream_cancel_or_an_error() -> None:
    subscribed: list[str] = []
    late = Flowable.just(1).do_on_subscribe(lambda _s: subscribed.append("late"))
    ts: TestSubscriber[tuple[int, int]] = Flowable.zip(Flowable.error(KeyError("first")), late).test()
    ts.assert_failure(KeyError).assert_no_violations()
    assert subscribed == []
