"""publish / replay / share / cache and ConnectableFlowable (connect, ref_count, auto_connect)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable
from rstreams.flowable import Disposable
from rstreams.flowable.operators._multicast import ConnectableFlowable, cache, publish, replay, share
from rstreams.processors import PublishProcessor
from rstreams.testing import TestPublisher, TestSubscriber

from .harness import check_scenarios


class Boom(Exception):
    pass


class Probe:
    """Counts subscriptions and cancellations of a source."""

    def __init__(self) -> None:
        self.subscribed = 0
        self.cancelled = 0

    def wrap(self, f: Flowable[Any]) -> Flowable[Any]:
        return f.do_on_subscribe(lambda s: self._sub()).do_on_cancel(self._cancel)

    def _sub(self) -> None:
        self.subscribed += 1

    def _cancel(self) -> None:
        self.cancelled += 1


def drive(ts: TestSubscriber[Any], pattern: list[int], limit: int = 10_000) -> None:
    i = 0
    while not ts.is_terminated and i < limit:
        ts.request(pattern[i % len(pattern)])
        i += 1


# ---------------------------------------------------------------------------------- scenarios


@pytest.mark.parametrize(
    "name,op",
    [
        ("share", share),
        ("cache", cache),
        ("publish.auto_connect", lambda f: publish(f).auto_connect()),
        ("publish.ref_count", lambda f: publish(f).ref_count()),
        ("replay.auto_connect", lambda f: replay(f).auto_connect()),
        ("replay(n).ref_count", lambda f: replay(f, 1000).ref_count()),
    ],
)
def test_scenarios_single_subscriber_sees_the_source(name: str, op: Any) -> None:
    check_scenarios(op, list(range(300)), list(range(300)))
    check_scenarios(op, [], [])


# ---------------------------------------------------------------------------------- publish


def test_publish_connect_multicasts_to_subscribers_present() -> None:
    probe = Probe()
    cf = publish(probe.wrap(Flowable.range(0, 5)))
    assert isinstance(cf, ConnectableFlowable)
    a = cf.test()
    b = cf.test()
    a.assert_no_values()
    assert probe.subscribed == 0
    d = cf.connect()
    assert isinstance(d, Disposable)
    a.assert_result(0, 1, 2, 3, 4).assert_no_violations()
    b.assert_result(0, 1, 2, 3, 4).assert_no_violations()
    assert probe.subscribed == 1
    cf.test().assert_result().assert_no_violations()  # late: only the terminal signal
    cf.connect()  # the terminated connection is replaced: a fresh upstream subscription
    assert probe.subscribed == 2


def test_publish_lockstep_slow_subscriber_paces_the_fast_one() -> None:
    cf = publish(Flowable.range(0, 1000))
    fast = cf.test()
    slow = cf.test(2)
    cf.connect()
    fast.assert_values(0, 1)
    slow.assert_values(0, 1)
    slow.request(3)
    fast.assert_values(0, 1, 2, 3, 4)
    slow.request(10_000)
    fast.assert_result(*range(1000)).assert_no_violations()
    slow.assert_result(*range(1000)).assert_no_violations()


def test_publish_prefetch_is_bounded() -> None:
    requests: list[int] = []
    cf = publish(Flowable.range(0, 10_000).do_on_request(requests.append))
    ts = cf.test(1)
    cf.connect()
    ts.assert_values(0)
    assert requests == [128]
    drive(ts, [50])
    ts.assert_result(*range(10_000)).assert_no_violations()
    assert max(requests) == 128 and set(requests[1:]) == {96}


def test_publish_connect_twice_subscribes_once_and_dispose_cancels_upstream() -> None:
    probe = Probe()
    cf = publish(probe.wrap(Flowable.never()))
    ts = cf.test()
    d1 = cf.connect()
    d2 = cf.connect()
    assert d1 is d2 and probe.subscribed == 1
    assert not d1.is_disposed
    d1.dispose()
    assert d1.is_disposed and probe.cancelled == 1
    d1.dispose()
    assert probe.cancelled == 1
    ts.assert_no_values().assert_no_violations()
    cf.connect()  # a fresh connection after disconnect
    assert probe.subscribed == 2


def test_publish_error_reaches_all() -> None:
    cf = publish(Flowable.error(Boom()))
    a, b = cf.test(), cf.test()
    cf.connect()
    a.assert_error(Boom).assert_no_violations()
    b.assert_error(Boom).assert_no_violations()


def test_connect_on_connect_receives_the_disposable_first() -> None:
    seen: list[Disposable] = []
    cf = publish(Flowable.range(0, 3))
    d = cf.connect(seen.append)
    assert seen == [d]


# ---------------------------------------------------------------------------------- ref_count / share


def test_ref_count_cancels_upstream_when_last_subscriber_leaves_and_reconnects() -> None:
    probe = Probe()
    shared = publish(probe.wrap(Flowable.never())).ref_count()
    a = shared.test()
    assert probe.subscribed == 1
    b = shared.test()
    assert probe.subscribed == 1
    a.cancel()
    assert probe.cancelled == 0
    b.cancel()
    assert probe.cancelled == 1
    c = shared.test()
    assert probe.subscribed == 2  # a fresh upstream subscription
    c.cancel()
    assert probe.cancelled == 2
    for ts in (a, b, c):
        ts.assert_no_values().assert_no_violations()


def test_ref_count_n_connects_at_the_nth_subscriber() -> None:
    probe = Probe()
    shared = publish(probe.wrap(Flowable.range(0, 3))).ref_count(2)
    a = shared.test()
    assert probe.subscribed == 0
    a.assert_no_values()
    b = shared.test()
    assert probe.subscribed == 1
    a.assert_result(0, 1, 2).assert_no_violations()
    b.assert_result(0, 1, 2).assert_no_violations()


def test_ref_count_reconnects_after_completion() -> None:
    probe = Probe()
    shared = share(probe.wrap(Flowable.range(0, 3)))
    shared.test().assert_result(0, 1, 2).assert_no_violations()
    shared.test().assert_result(0, 1, 2).assert_no_violations()
    assert probe.subscribed == 2


def test_share_runs_the_source_once_for_concurrent_subscribers() -> None:
    probe = Probe()
    shared = share(probe.wrap(Flowable.range(0, 500)))
    a = shared.test(0)
    b = shared.test(0)
    drive(b, [7])
    a.assert_no_values()  # lockstep: b cannot go ahead of a
    drive(a, [3])
    drive(b, [7])
    a.assert_result(*range(500)).assert_no_violations()
    b.assert_result(*range(500)).assert_no_violations()
    assert probe.subscribed == 1


def test_share_with_hot_source() -> None:
    pp = PublishProcessor.create()
    shared = share(pp)
    a = shared.test()
    pp.on_next(1)
    b = shared.test()
    pp.on_next(2)
    pp.on_complete()
    a.assert_result(1, 2).assert_no_violations()
    b.assert_result(2).assert_no_violations()


def test_ref_count_bad_arguments() -> None:
    cf = publish(Flowable.range(0, 1))
    with pytest.raises(ValueError):
        cf.ref_count(0)
    with pytest.raises(TypeError):
        cf.ref_count(True)
    with pytest.raises(ValueError):
        cf.auto_connect(-1)
    with pytest.raises(TypeError):
        cf.auto_connect("1")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        replay(Flowable.range(0, 1), 0)
    with pytest.raises(TypeError):
        replay(Flowable.range(0, 1), 2.0)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------- auto_connect


def test_auto_connect_connects_at_nth_and_never_disconnects() -> None:
    probe = Probe()
    ac = publish(probe.wrap(Flowable.never())).auto_connect(2)
    a = ac.test()
    assert probe.subscribed == 0
    b = ac.test()
    assert probe.subscribed == 1
    a.cancel()
    b.cancel()
    assert probe.cancelled == 0
    ac.test()
    assert probe.subscribed == 1


def test_auto_connect_zero_connects_immediately() -> None:
    probe = Probe()
    cf = replay(probe.wrap(Flowable.range(0, 3)))
    ac = cf.auto_connect(0)
    assert probe.subscribed == 1 and ac is cf
    ac.test().assert_result(0, 1, 2).assert_no_violations()


# ---------------------------------------------------------------------------------- replay / cache


def test_replay_connectable_each_subscriber_at_its_own_pace() -> None:
    cf = replay(Flowable.range(0, 10))
    early = cf.test(3)
    cf.connect()
    early.assert_values(0, 1, 2)
    late = cf.test()
    late.assert_result(*range(10)).assert_no_violations()
    early.request(100).assert_result(*range(10)).assert_no_violations()


def test_replay_n_keeps_the_last_n() -> None:
    cf = replay(Flowable.range(0, 10), 3)
    cf.connect()
    cf.test().assert_result(*range(10)).assert_no_violations()  # the first demand runs the source
    cf.test().assert_result(7, 8, 9).assert_no_violations()


def test_replay_requests_what_the_most_demanding_subscriber_requested() -> None:
    """RxJava's replay(): two subscribers with requests of 10 and 100 make it request 100 from the
    upstream; with no demand at all, connect() requests nothing (backpressure is kept)."""
    tp: TestPublisher[int] = TestPublisher.create()
    cf = Flowable.from_publisher(tp).replay()
    cf.connect()
    assert tp.request_calls == []
    a = cf.test(10)
    b = cf.test(100)
    assert sum(tp.request_calls) == 100
    b.request(5)
    assert sum(tp.request_calls) == 105
    a.request(50)  # a's total (60) is below what was already requested
    assert sum(tp.request_calls) == 105
    tp.next(*range(105))
    a.assert_values(*range(60))
    b.assert_values(*range(105))
    late = cf.test(3)  # replays from the buffer without asking the upstream for more
    late.assert_values(0, 1, 2)
    assert sum(tp.request_calls) == 105
    tp.complete()
    late.request(200).assert_result(*range(105)).assert_no_violations()
    a.request(100).assert_result(*range(105)).assert_no_violations()
    b.assert_result(*range(105)).assert_no_violations()


def test_replay_over_an_endless_source_runs_only_as_far_as_demanded() -> None:
    produced: list[int] = []
    cf = Flowable.range(0, 2**62).do_on_next(produced.append).replay(5)
    cf.connect()
    assert produced == []
    cf.take(3).test().assert_result(0, 1, 2).assert_no_violations()
    assert produced == [0, 1, 2]
    ts = cf.test(4)  # three from the buffer, then its fourth demand asks the upstream for one more
    ts.assert_values(0, 1, 2, 3)
    assert produced == [0, 1, 2, 3]
    ts.cancel()
    ts.assert_no_violations()


def test_replay_subscribers_requesting_one_by_one_from_threads_get_everything() -> None:
    import threading

    cf = Flowable.range(0, 2000).replay()
    subs = [TestSubscriber(0) for _ in range(3)]
    for ts in subs:
        cf.subscribe(ts)
    cf.connect()

    def pull(ts: TestSubscriber[int]) -> None:
        for _ in range(2000):
            ts.request(1)

    threads = [threading.Thread(target=pull, args=(ts,)) for ts in subs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for ts in subs:
        ts.await_done(10).assert_result(*range(2000)).assert_no_violations()


def test_replay_dispose_cancels_upstream() -> None:
    probe = Probe()
    pp = PublishProcessor.create()
    cf = replay(probe.wrap(pp))
    ts = cf.test()
    d = cf.connect()
    pp.on_next(1)
    d.dispose()
    assert probe.cancelled == 1
    pp.on_next(2)
    ts.assert_values(1).assert_no_violations()


def test_cache_runs_the_source_once_for_several_subscribers() -> None:
    probe = Probe()
    c = cache(probe.wrap(Flowable.range(0, 5)))
    assert probe.subscribed == 0
    a = c.test(2)
    b = c.test()
    a.assert_values(0, 1)
    b.assert_result(0, 1, 2, 3, 4).assert_no_violations()
    a.request(3).assert_result(0, 1, 2, 3, 4).assert_no_violations()
    c.test().assert_result(0, 1, 2, 3, 4).assert_no_violations()
    assert probe.subscribed == 1


def test_cache_cancel_does_not_cancel_upstream() -> None:
    probe = Probe()
    pp = PublishProcessor.create()
    c = cache(probe.wrap(pp))
    a = c.test()
    pp.on_next(1)
    a.cancel()
    assert probe.cancelled == 0
    pp.on_next(2)
    pp.on_complete()
    c.test().assert_result(1, 2).assert_no_violations()


def test_cache_error_is_replayed() -> None:
    c = cache(Flowable.concat(Flowable.just(1), Flowable.error(Boom())))
    c.test().assert_values(1).assert_error(Boom).assert_no_violations()
    c.test().assert_values(1).assert_error(Boom).assert_no_violations()


# ---------------------------------------------------------------------------------- properties


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(), max_size=200),
    st.lists(st.integers(1, 40), min_size=1, max_size=6),
    st.lists(st.integers(1, 40), min_size=1, max_size=6),
    st.booleans(),
)
def test_property_share_two_subscribers_get_the_source(
    data: list[int], pa: list[int], pb: list[int], hidden: bool
) -> None:
    src: Flowable[int] = Flowable.from_iterable(data)
    if hidden:
        src = src.hide()
    shared = share(src)
    a: TestSubscriber[int] = shared.test(0)
    b: TestSubscriber[int] = shared.test(0)
    for i in range(10_000):
        if a.is_terminated and b.is_terminated:
            break
        a.request(pa[i % len(pa)])
        b.request(pb[i % len(pb)])
    a.assert_result(*data).assert_no_violations()
    b.assert_result(*data).assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(), max_size=200),
    st.lists(st.integers(1, 40), min_size=1, max_size=6),
    st.one_of(st.none(), st.integers(1, 50)),
    st.booleans(),
)
def test_property_replay_late_subscriber_matches_model(
    data: list[int], pattern: list[int], n: int | None, hidden: bool
) -> None:
    src: Flowable[int] = Flowable.from_iterable(data)
    if hidden:
        src = src.hide()
    cf = replay(src, n)
    early: TestSubscriber[int] = cf.test(0)
    cf.connect()
    waiting: TestSubscriber[int] = cf.test(0)  # subscribed before any item: it gets every item
    drive(early, pattern)  # replay() asks the upstream only for what early requests
    late: TestSubscriber[int] = cf.test(0)  # after the items: only the retained ones
    drive(waiting, pattern)
    drive(late, pattern)
    early.assert_result(*data).assert_no_violations()
    waiting.assert_result(*data).assert_no_violations()
    want = data if n is None else data[-n:] if data else []
    late.assert_result(*want).assert_no_violations()
