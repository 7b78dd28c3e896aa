"""Reactive Streams rule tests (``test_rule_*``) of the do_on_* callbacks and do_finally.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_do_on.py``."""

from __future__ import annotations

import pytest

from operators.harness import Boom
from operators.test_do_on import OPS, both, noop, raiser
from rstreams import Flowable
from rstreams.testing import TestPublisher


def test_rule_3_15_do_on_request_raising_goes_to_the_hook(undeliverable: list[BaseException]) -> None:
    ts = Flowable.range(0, 3).do_on_request(raiser).test(1)
    ts.request(5)  # must return normally
    ts.assert_result(0, 1, 2).assert_no_violations()
    assert len(undeliverable) == 2
    assert all(isinstance(e, Boom) for e in undeliverable)


def test_rule_3_16_do_on_cancel_raising_goes_to_the_hook(undeliverable: list[BaseException]) -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(tp).do_on_cancel(raiser).test()
    ts.cancel()  # must return normally
    assert tp.was_cancelled
    assert len(undeliverable) == 1 and isinstance(undeliverable[0], Boom)
    ts.assert_no_violations()


@pytest.mark.parametrize("name", OPS)
def test_rule_3_9_bad_request_signals_value_error(name: str) -> None:
    for _, src in both(list(range(10))):
        ts = getattr(src, name)(noop).test(0)
        ts.request(0)
        ts.assert_no_values().assert_error(ValueError, match="3.9").assert_no_violations()

