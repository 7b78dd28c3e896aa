"""Reactive Streams rule tests (``test_rule_*``) of PublishProcessor and BehaviorProcessor.

Their other tests (scenarios, properties, arguments) are in ``tests/processors/test_publish_behavior.py``."""

from __future__ import annotations

from typing import Any

import pytest

from processors.test_publish_behavior import Boom
from rstreams.errors import BadRequestError, NoneElementError
from rstreams.processors import BehaviorProcessor, PublishProcessor


def test_rule_2_13_publish_processor_on_next_none_raises_type_error() -> None:
    pp = PublishProcessor.create()
    with pytest.raises(TypeError):
        pp.on_next(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pp.on_error(None)  # type: ignore[arg-type]
    with pytest.raises(NoneElementError):
        pp.offer(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "3"])
def test_rule_3_9_publish_processor_bad_request_signals_value_error(
    bad: Any, undeliverable: list[BaseException]
) -> None:
    pp = PublishProcessor.create()
    ts = pp.test(0)
    ts.request(bad)
    ts.assert_error(ValueError).assert_no_violations()
    assert isinstance(ts.errors[0], BadRequestError) and "3.9" in str(ts.errors[0])
    assert pp.subscriber_count == 0
    pp.on_next(1)
    ts.assert_no_values()
    assert not undeliverable


def test_rule_1_1_publish_processor_never_exceeds_demand() -> None:
    pp = PublishProcessor.create()
    ts = pp.test(3)
    for i in range(3):
        pp.offer(i)
    assert pp.offer(9) is False
    ts.assert_values(0, 1, 2).assert_no_violations()


def test_rule_1_7_publish_processor_error_after_complete_goes_to_hook(
    undeliverable: list[BaseException],
) -> None:
    pp = PublishProcessor.create()
    ts = pp.test()
    pp.on_complete()
    pp.on_error(Boom())
    pp.on_next(1)
    ts.assert_result().assert_no_violations()
    assert len(undeliverable) == 1 and isinstance(undeliverable[0], Boom)


def test_rule_3_9_behavior_processor_bad_request(undeliverable: list[BaseException]) -> None:
    bp = BehaviorProcessor.create(default=1)
    ts = bp.test(0)
    ts.request(0)
    ts.assert_no_values().assert_error(ValueError).assert_no_violations()
    assert bp.subscriber_count == 0
    # and on the fast path
    ts2 = bp.test(1)
    ts2.assert_values(1)
    ts2.request(-1)
    ts2.assert_error(ValueError).assert_no_violations()
    assert not undeliverable


def test_rule_2_13_behavior_processor_on_next_none_raises_type_error() -> None:
    with pytest.raises(TypeError):
        BehaviorProcessor.create().on_next(None)  # type: ignore[arg-type]
