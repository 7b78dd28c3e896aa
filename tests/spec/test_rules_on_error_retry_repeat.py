"""Reactive Streams rule tests (``test_rule_*``) of on_error_return, on_error_resume_next, on_error_complete, retry and repeat.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_on_error_retry_repeat.py``."""

from __future__ import annotations

import pytest

from operators.test_merge_zip import CountingSource
from rstreams import Flowable
from rstreams.testing import TestSubscriber


def test_rule_3_9_on_error_return_bad_request_is_not_recovered() -> None:
    src = CountingSource(Flowable.never())
    ts = Flowable.from_publisher(src).on_error_return(lambda e: -1).test(0)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_values().assert_no_violations()
    assert src.cancels == 1


@pytest.mark.parametrize("hide", [False, True])
def test_rule_3_9_on_error_return_bad_request_while_the_fallback_value_is_held(hide: bool) -> None:
    # the error arrived with no demand left: the fallback value waits; a bad request then is
    # signalled (not ignored), and the held value never follows it
    src: Flowable[int] = Flowable.concat(Flowable.just(1, 2), Flowable.error(RuntimeError("boom")))
    ts: TestSubscriber[int] = TestSubscriber(0)
    (src.hide() if hide else src).on_error_return(lambda e: -1).subscribe(ts)
    ts.request(2)
    ts.assert_values(1, 2).assert_not_terminated()
    ts.request(0)
    ts.request(5)
    ts.assert_values(1, 2).assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_3_9_on_error_resume_next_bad_request_is_not_recovered() -> None:
    fb = CountingSource(Flowable.just(1))
    ts = Flowable.never().on_error_resume_next(fb).test(0)
    ts.request(-5)
    ts.assert_error(ValueError).assert_no_values().assert_no_violations()
    assert fb.subscriptions == 0


def test_rule_3_9_on_error_complete_bad_request_is_not_swallowed() -> None:
    Flowable.never().on_error_complete().test(0).request(0).assert_error(ValueError).assert_no_violations()


def test_rule_3_9_retry_bad_request_is_not_retried() -> None:
    src = CountingSource(Flowable.never())
    ts = Flowable.from_publisher(src).retry().test(0)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()
    assert src.subscriptions == 1 and src.cancels == 1


def test_rule_3_9_repeat_bad_request() -> None:
    Flowable.never().repeat(3).test(0).request(0).assert_error(ValueError).assert_no_violations()

