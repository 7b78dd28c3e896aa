"""Reactive Streams rule tests (``test_rule_*``) of ReplayProcessor, UnicastProcessor and AsyncProcessor.

Their other tests (scenarios, properties, arguments) are in ``tests/processors/test_replay_unicast_async.py``."""

from __future__ import annotations

import pytest

from rstreams.processors import AsyncProcessor, ReplayProcessor, UnicastProcessor


def test_rule_3_9_replay_processor_bad_request() -> None:
    rp = ReplayProcessor.create()
    rp.on_next(1)
    ts = rp.test(0)
    ts.request(0)
    ts.assert_no_values().assert_error(ValueError).assert_no_violations()
    assert "3.9" in str(ts.errors[0])


def test_rule_2_13_replay_processor_on_next_none_raises_type_error() -> None:
    with pytest.raises(TypeError):
        ReplayProcessor.create().on_next(None)  # type: ignore[arg-type]


def test_rule_3_9_unicast_processor_bad_request() -> None:
    calls: list[int] = []
    up = UnicastProcessor.create(on_terminate=lambda: calls.append(1))
    up.on_next(1)
    ts = up.test(0)
    ts.request(-5)
    ts.assert_no_values().assert_error(ValueError).assert_no_violations()
    assert calls == [1]


def test_rule_2_13_unicast_processor_on_next_none_raises_type_error() -> None:
    with pytest.raises(TypeError):
        UnicastProcessor.create().on_next(None)  # type: ignore[arg-type]


def test_rule_3_9_async_processor_bad_request() -> None:
    ap = AsyncProcessor.create()
    ts = ap.test(0)
    ts.request(0)
    ts.assert_error(ValueError).assert_no_violations()
    assert ap.subscriber_count == 0


def test_rule_2_13_async_processor_on_next_none_raises_type_error() -> None:
    with pytest.raises(TypeError):
        AsyncProcessor.create().on_next(None)  # type: ignore[arg-type]
