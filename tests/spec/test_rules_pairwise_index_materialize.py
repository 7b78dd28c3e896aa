"""Reactive Streams rule tests (``test_rule_*``) of pairwise, zip_with_index / enumerate and materialize / dematerialize.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_pairwise_index_materialize.py``."""

from __future__ import annotations

from typing import Any

import pytest

from operators.harness import Boom
from rstreams import BadRequestError, Flowable
from rstreams.flowable import Notification
from rstreams.testing import TestSubscriber


def test_rule_3_9_pairwise_non_positive_request() -> None:
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.range(0, 5).hide().pairwise().subscribe(ts)
    ts.request(-1)
    ts.assert_error(BadRequestError).assert_no_violations()


def test_rule_3_12_pairwise_nothing_after_cancel() -> None:
    ts: TestSubscriber[Any] = TestSubscriber(1)
    Flowable.range(0, 5).hide().pairwise().subscribe(ts)
    ts.cancel()
    ts.request(3)
    ts.assert_values((0, 1)).assert_not_terminated().assert_no_violations()


def test_rule_3_9_materialize_non_positive_request() -> None:
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.range(0, 3).materialize().subscribe(ts)
    ts.request(0)
    ts.assert_error(BadRequestError).assert_no_violations()


@pytest.mark.parametrize("hide", [False, True])
@pytest.mark.parametrize("fails", [False, True])
def test_rule_3_9_materialize_non_positive_request_while_the_terminal_notification_is_held(
    hide: bool, fails: bool
) -> None:
    # the upstream terminated with no demand left: the terminal notification waits; a bad request
    # then is still signalled (not ignored), and the held notification never follows it
    src: Flowable[int] = Flowable.concat(Flowable.just(1, 2), Flowable.error(Boom())) if fails else Flowable.just(1, 2)
    ts: TestSubscriber[Any] = TestSubscriber(0)
    (src.hide() if hide else src).materialize().subscribe(ts)
    ts.request(2)
    ts.assert_value_count(2).assert_not_terminated()
    ts.request(0)
    ts.request(5)
    ts.assert_values(Notification.of_next(1), Notification.of_next(2)).assert_error(BadRequestError)
    ts.assert_no_violations()

