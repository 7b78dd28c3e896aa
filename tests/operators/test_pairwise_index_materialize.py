"""pairwise, zip_with_index / enumerate, materialize / dematerialize and Notification: scenarios
(fused and hidden), demand, cancellation, errors, rules and bad arguments."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from operators.harness import Boom, check_raising, check_scenarios, run_one_by_one
from rstreams import Flowable, NoneElementError
from rstreams.flowable import Notification
from rstreams.testing import TestPublisher, TestSubscriber

MAX = 2**63 - 1


def _pairs(d: list[Any]) -> list[tuple[Any, Any]]:
    return list(zip(d, d[1:], strict=False))


# ---------------------------------------------------------------------------------------------
# pairwise


@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_pairwise_scenarios(n: int) -> None:
    check_scenarios(lambda f: f.pairwise(), range(n), _pairs)


def test_pairwise_over_a_fused_chain_and_after_filter() -> None:
    for src in (Flowable.range(0, 10), Flowable.range(0, 10).hide()):
        src.filter(lambda x: x % 3 == 0).pairwise().test().assert_result((0, 3), (3, 6), (6, 9)).assert_no_violations()
        src.take(3).pairwise().take(1).test().assert_result((0, 1)).assert_no_violations()


def test_pairwise_first_request_asks_one_more_then_passes_through() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[tuple[int, int]] = TestSubscriber(0)
    Flowable.from_publisher(tp).pairwise().subscribe(ts)
    ts.request(2)
    assert tp.request_calls == [3]
    tp.next(1, 2, 3)
    ts.assert_values((1, 2), (2, 3))
    ts.request(1)
    assert tp.request_calls == [3, 1]
    tp.next(4)
    tp.complete()
    ts.assert_result((1, 2), (2, 3), (3, 4)).assert_no_violations()


def test_pairwise_unbounded_request_stays_unbounded() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    Flowable.from_publisher(tp).pairwise().test()
    assert tp.request_calls == [MAX]


def test_pairwise_upstream_error_passes_through() -> None:
    ts = Flowable.just(1, 2).concat_with(Flowable.error(Boom())).hide().pairwise().test()
    ts.assert_values((1, 2)).assert_error(Boom).assert_no_violations()


def test_pairwise_none_from_upstream_is_rule_2_13() -> None:
    for src in (Flowable.just(1, 2, 3).map(lambda x: None if x == 3 else x), Flowable.just(1, 2, 3).hide().map(lambda x: None if x == 3 else x)):
        src.pairwise().test().assert_values((1, 2)).assert_error(NoneElementError).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# zip_with_index / enumerate


@pytest.mark.parametrize("start", [0, 5, -2])
def test_zip_with_index_scenarios(start: int) -> None:
    check_scenarios(lambda f: f.zip_with_index(start), "abcdef", lambda d: list(enumerate(d, start)))


def test_enumerate_is_zip_with_index() -> None:
    check_scenarios(lambda f: f.enumerate(1), range(5), lambda d: list(enumerate(d, 1)))


def test_zip_with_index_counts_per_subscription() -> None:
    for f in (Flowable.just("a", "b").zip_with_index(), Flowable.just("a", "b").hide().zip_with_index()):
        f.test().assert_result((0, "a"), (1, "b")).assert_no_violations()
        f.test().assert_result((0, "a"), (1, "b")).assert_no_violations()


def test_zip_with_index_one_by_one_and_upstream_error() -> None:
    run_one_by_one(Flowable.range(0, 3).hide().zip_with_index()).assert_result((0, 0), (1, 1), (2, 2)).assert_no_violations()
    ts = Flowable.just(7).concat_with(Flowable.error(Boom())).zip_with_index().test()
    ts.assert_values((0, 7)).assert_error(Boom).assert_no_violations()


def test_zip_with_index_none_from_upstream_is_rule_2_13() -> None:
    for src in (Flowable.just(1, 2).map(lambda x: None if x == 2 else x), Flowable.just(1, 2).hide().map(lambda x: None if x == 2 else x)):
        src.zip_with_index().test().assert_values((0, 1)).assert_error(NoneElementError).assert_no_violations()


def test_zip_with_index_bad_arguments() -> None:
    with pytest.raises(TypeError, match="start must be an int"):
        Flowable.just(1).zip_with_index("0")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"enumerate\(\): start must be an int"):
        Flowable.just(1).enumerate(True)


# ---------------------------------------------------------------------------------------------
# Notification


def test_notification_constructors_and_kinds() -> None:
    n = Notification.of_next(1)
    assert (n.kind, n.value, n.error, n.is_on_next, n.is_on_error, n.is_on_complete) == ("on_next", 1, None, True, False, False)
    e = ValueError("x")
    ne = Notification.of_error(e)
    assert ne.is_on_error and ne.error is e and ne.value is None
    assert Notification.of_complete().is_on_complete
    assert Notification.of_next(1) == Notification("on_next", 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        n.value = 2  # type: ignore[misc]


def test_notification_rejects_invalid_signals() -> None:
    with pytest.raises(NoneElementError):
        Notification.of_next(None)
    with pytest.raises(TypeError, match="needs an exception"):
        Notification.of_error("boom")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind must be"):
        Notification("on_nxt", 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="carries no"):
        Notification("on_complete", 1)


# ---------------------------------------------------------------------------------------------
# materialize


def test_materialize_scenarios() -> None:
    def expected(d: list[int]) -> list[Notification[int]]:
        return [Notification.of_next(x) for x in d] + [Notification.of_complete()]

    class _BoomNotification:
        """Equals the on_error notification of the harness's Boom (created inside the harness)."""

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Notification) and other.is_on_error and isinstance(other.error, Boom)

        __hash__ = None  # type: ignore[assignment]

    def on_error(d: list[int]) -> tuple[list[Any], None]:
        return [Notification.of_next(x) for x in d] + [_BoomNotification()], None  # the error as a value

    check_scenarios(lambda f: f.materialize(), range(5), expected, on_error_expected=on_error)


def test_materialize_upstream_error_becomes_the_last_notification_then_complete() -> None:
    err = Boom()
    for src in (Flowable.just(1), Flowable.just(1).hide()):
        ts = src.concat_with(Flowable.error(err)).materialize().test()
        ts.assert_result(Notification.of_next(1), Notification.of_error(err)).assert_no_violations()


def test_materialize_terminal_notification_waits_for_demand() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[Notification[int]] = TestSubscriber(0)
    Flowable.from_publisher(tp).materialize().subscribe(ts)
    ts.request(1)
    tp.next(5)
    tp.error(Boom())
    ts.assert_values(Notification.of_next(5)).assert_not_terminated()
    ts.request(1)
    assert ts.values[1].is_on_error
    ts.assert_complete().assert_no_violations()


def test_materialize_cancel_before_the_terminal_notification_drops_it() -> None:
    ts: TestSubscriber[Any] = TestSubscriber(1)
    Flowable.just(1).hide().materialize().subscribe(ts)
    ts.cancel()
    ts.request(1)
    ts.assert_values(Notification.of_next(1)).assert_not_terminated().assert_no_violations()


def test_materialize_non_positive_request_after_the_terminal_notification_is_ignored() -> None:
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.just(1).materialize().subscribe(ts)
    ts.request(2)
    ts.request(0)
    ts.assert_result(Notification.of_next(1), Notification.of_complete()).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# dematerialize


def test_dematerialize_round_trip_scenarios() -> None:
    check_scenarios(lambda f: f.materialize().dematerialize(), range(6), list(range(6)), on_error_expected=lambda d: (list(d), Boom))


def test_dematerialize_on_error_and_on_complete_cancel_the_upstream() -> None:
    for last, check in (
        (Notification.of_error(Boom()), lambda ts: ts.assert_error(Boom)),
        (Notification.of_complete(), lambda ts: ts.assert_complete()),
    ):
        tp: TestPublisher[Notification[int]] = TestPublisher.create()
        ts = Flowable.from_publisher(tp).dematerialize().test()
        tp.next(Notification.of_next(1), last)
        tp.assert_was_cancelled()
        check(ts)
        ts.assert_values(1).assert_no_violations()


def test_dematerialize_with_a_selector() -> None:
    ts = Flowable.just(1, 2, 0, 3).dematerialize(lambda x: Notification.of_next(x * 10) if x else Notification.of_complete()).test()
    ts.assert_result(10, 20).assert_no_violations()


def test_dematerialize_raising_selector_cancels_upstream() -> None:
    def sel(x: int) -> Notification[int]:
        raise Boom(x)

    check_raising(lambda f: f.dematerialize(sel), range(3))


def test_dematerialize_selector_returning_none_is_rule_2_13() -> None:
    Flowable.just(1).dematerialize(lambda x: None).test().assert_error(NoneElementError).assert_no_violations()  # type: ignore[arg-type, return-value]


def test_dematerialize_non_notification_is_a_type_error() -> None:
    ts = Flowable.just(1).hide().dematerialize().test()  # type: ignore[misc]
    ts.assert_error(TypeError, match="expected a Notification").assert_no_violations()


def test_dematerialize_one_by_one() -> None:
    notes = [Notification.of_next(x) for x in range(4)] + [Notification.of_complete()]
    run_one_by_one(Flowable.from_iterable(notes).hide().dematerialize()).assert_result(0, 1, 2, 3).assert_no_violations()


def test_dematerialize_bad_arguments() -> None:
    with pytest.raises(TypeError, match="selector must be callable"):
        Flowable.just(1).dematerialize(5)  # type: ignore[call-overload]
