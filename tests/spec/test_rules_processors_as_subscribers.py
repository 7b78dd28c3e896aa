"""Every processor as a Subscriber: rule 2.5 (a second ``on_subscribe`` while one
upstream is active is cancelled, never requested from) and rule 2.13 (``on_error`` with something
that is not an exception instance is refused with TypeError at the call)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from rstreams import Flowable, ProtocolViolationError
from rstreams.flowable._processors._replay import DemandReplayProcessor
from rstreams.processors import (
    AsyncProcessor,
    BehaviorProcessor,
    FlowableProcessor,
    MulticastProcessor,
    PublishProcessor,
    ReplayProcessor,
    UnicastProcessor,
)
from rstreams.testing import TestSubscriber

PROCESSORS: dict[str, Callable[[], FlowableProcessor[Any]]] = {
    "publish": PublishProcessor.create,
    "behavior": BehaviorProcessor.create,
    "replay": ReplayProcessor.create,
    "replay_demand": lambda: DemandReplayProcessor(None),
    "async": AsyncProcessor.create,
    "unicast": UnicastProcessor.create,
    "multicast": lambda: MulticastProcessor.create(8),
    "multicast_ref_count": lambda: MulticastProcessor.create(8, ref_count=True),
    "serialized_publish": lambda: PublishProcessor.create().to_serialized(),
    "serialized_replay": lambda: ReplayProcessor.create().to_serialized(),
}


class RecordingSubscription:
    """A Subscription that records what the processor does with it."""

    def __init__(self) -> None:
        self.requests: list[int] = []
        self.cancelled = 0

    def request(self, n: int) -> None:
        self.requests.append(n)

    def cancel(self) -> None:
        self.cancelled += 1


@pytest.mark.parametrize("name", PROCESSORS)
def test_rule_2_5_second_on_subscribe_while_one_is_active_is_cancelled_not_requested(
    name: str, undeliverable: list[BaseException]
) -> None:
    p = PROCESSORS[name]()
    ts: TestSubscriber[Any] = p.test()
    first, second = RecordingSubscription(), RecordingSubscription()
    p.on_subscribe(first)
    assert first.requests and first.cancelled == 0  # the first upstream is asked (unbounded or a prefetch)
    p.on_subscribe(second)
    assert second.requests == []  # before: PublishProcessor & co. requested 2**63-1 here
    assert second.cancelled == 1
    assert first.cancelled == 0  # the active upstream is kept
    # the double on_subscribe is reported (rule 2.12), never silent
    assert [type(e) for e in undeliverable] == [ProtocolViolationError]
    assert "2.12" in str(undeliverable[0])
    p.on_next(1)
    p.on_complete()
    ts.assert_result(1)  # async: the last value, the others: the live one
    ts.assert_no_violations()


@pytest.mark.parametrize("name", PROCESSORS)
def test_rule_2_5_on_subscribe_after_termination_is_cancelled_quietly(
    name: str, undeliverable: list[BaseException]
) -> None:
    p = PROCESSORS[name]()
    first, late = RecordingSubscription(), RecordingSubscription()
    p.on_subscribe(first)
    p.on_complete()
    p.on_subscribe(late)
    assert late.requests == [] and late.cancelled == 1
    assert undeliverable == []  # not a double subscription: the processor is done
    p.test().assert_complete().assert_no_violations()


@pytest.mark.parametrize("name", ["publish", "behavior", "replay", "async", "multicast"])
def test_rule_2_5_race_two_upstreams_subscribing_at_once_only_one_is_kept(
    name: str, undeliverable: list[BaseException]
) -> None:
    for _ in range(50):
        p = PROCESSORS[name]()
        subs = [RecordingSubscription(), RecordingSubscription()]
        barrier = threading.Barrier(2)

        def run(
            s: RecordingSubscription, p: FlowableProcessor[Any] = p, b: threading.Barrier = barrier
        ) -> None:
            b.wait()
            p.on_subscribe(s)

        threads = [threading.Thread(target=run, args=(s,)) for s in subs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        kept = [s for s in subs if s.requests]
        dropped = [s for s in subs if s.cancelled]
        assert len(kept) == 1 and len(dropped) == 1 and kept[0] is not dropped[0]
        assert dropped[0].requests == []


def test_rule_2_5_feeding_a_processor_from_two_sources_keeps_the_first_use_merge() -> None:
    pp: PublishProcessor[int] = PublishProcessor.create()
    ts = pp.test()
    Flowable.never().subscribe(pp)
    cancelled: list[int] = []
    Flowable.just(1, 2).do_on_cancel(lambda: cancelled.append(1)).subscribe(pp)  # refused: rule 2.5
    assert cancelled == [1]
    ts.assert_empty().assert_no_violations()
    merged: PublishProcessor[int] = PublishProcessor.create()
    ts2 = merged.test()
    Flowable.merge(Flowable.just(1), Flowable.just(2)).subscribe(merged)
    ts2.assert_result(1, 2).assert_no_violations()


@pytest.mark.parametrize("name", PROCESSORS)
@pytest.mark.parametrize("bad", ["x", ValueError, 42], ids=["str", "exception-class", "int"])
def test_rule_2_13_on_error_with_a_non_exception_raises_type_error_at_the_call(
    name: str, bad: Any, undeliverable: list[BaseException]
) -> None:
    p = PROCESSORS[name]()
    ts: TestSubscriber[Any] = p.test()
    p.on_subscribe(RecordingSubscription())
    with pytest.raises(TypeError, match=r"on_error\(\) expects an exception instance"):
        p.on_error(bad)
    # refused, not passed on: the subscribers saw no malformed on_error (before: a rule 2.13 violation)
    ts.assert_no_errors().assert_not_complete().assert_no_violations()
    p.on_error(ValueError("real"))
    ts.assert_error(ValueError, match="real").assert_no_violations()
    assert undeliverable == []


@pytest.mark.parametrize("name", PROCESSORS)
def test_rule_2_13_on_error_none_still_raises(name: str) -> None:
    p = PROCESSORS[name]()
    ts: TestSubscriber[Any] = p.test()
    with pytest.raises(TypeError):
        p.on_error(None)  # type: ignore[arg-type]
    ts.assert_no_errors().assert_no_violations()
