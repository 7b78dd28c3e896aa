"""Reactive Streams rule tests (``test_rule_*``) of MulticastProcessor.

Their other tests (scenarios, properties, arguments) are in ``tests/processors/test_multicast_processor.py``."""

from __future__ import annotations

from typing import Any

import pytest

from processors.test_multicast_processor import _make
from rstreams import Flowable
from rstreams.processors import MulticastProcessor
from rstreams.testing import TestSubscriber


def test_rule_3_9_multicast_processor_bad_request_does_not_block_others() -> None:
    mp = MulticastProcessor.create()
    mp.start()
    good = mp.test()
    bad = mp.test(0)
    mp.offer(1)
    good.assert_no_values()  # lockstep: bad has no demand
    bad.request(0)
    bad.assert_no_values().assert_error(ValueError).assert_no_violations()
    good.assert_values(1).assert_no_violations()


def test_rule_2_13_multicast_processor_on_next_none_raises_type_error() -> None:
    mp = MulticastProcessor.create()
    with pytest.raises(TypeError):
        mp.on_next(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        mp.offer(None)  # type: ignore[arg-type]


def test_rule_1_1_multicast_never_exceeds_any_subscribers_demand() -> None:
    mp = MulticastProcessor.create()
    Flowable.range(0, 50).subscribe(mp)
    subs = [mp.test(0) for _ in range(3)]
    for k, ts in enumerate(subs):
        ts.request(k + 1)
    for ts in subs:
        ts.assert_values(0).assert_no_violations()


@pytest.mark.parametrize("kind", ["publish", "behavior", "replay", "unicast", "async", "multicast"])
def test_rule_3_13_processor_drops_the_subscriber_on_cancel(kind: str) -> None:
    import gc
    import weakref

    p = _make(kind)
    p.on_next(5) if kind != "multicast" else p.offer(5)
    ts: TestSubscriber[Any] = p.test(1)
    ts.cancel()
    ref = weakref.ref(ts)
    del ts
    gc.collect()
    assert ref() is None, f"{kind}: the processor still references a cancelled subscriber"
    assert not p.has_subscribers
