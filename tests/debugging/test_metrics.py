"""name()/tag() metrics (exact counters, gauges, the pluggable registry) and the live picture of a
running chain (rstreams.debug.describe, TestSubscriber's failure message)."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

import pytest

from rstreams import Flowable, debug, metrics, schedulers
from rstreams.testing import TestPublisher, TestSubscriber

MAX = 2**63 - 1


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[metrics.Registry]:
    metrics.set_registry(None)
    yield metrics.get_registry()
    metrics.set_registry(None)


def snap(name: str) -> metrics.StageSnapshot:
    return metrics.get_registry().snapshot()[name]


@pytest.mark.parametrize("seed", range(8))
def test_counters_exact_for_a_seeded_request_pattern(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 300)
    source = Flowable.range(0, n) if seed % 2 else Flowable.range(0, n).hide()
    ts: TestSubscriber[int] = source.name("s").test(0)
    asked = 0
    for _ in range(rng.randint(1, 6)):
        k = rng.randint(1, 80)
        asked += k
        ts.request(k)
        if asked >= n:  # completed: later requests are no longer the stream's
            break
    ts.assert_value_count(min(asked, n)).assert_no_violations()
    s = snap("s")
    assert (s.subscribed, s.requested, s.emitted) == (1, asked, min(asked, n))
    assert (s.completed, s.failed, s.cancelled) == ((1, 0, 0) if asked >= n else (0, 0, 0))
    assert s.active == (0 if asked >= n else 1)
    assert s.outstanding_demand == (0 if asked >= n else asked - min(asked, n))


def test_two_named_stages_around_a_filter_and_a_take() -> None:
    ts = (
        Flowable.range(0, 100).hide().name("src").filter(lambda x: x % 2 == 0).name("evens").take(10).test(0)
    )
    ts.request(3).request(4).request(5)
    ts.assert_result(*range(0, 20, 2)).assert_no_violations()
    evens, src = snap("evens"), snap("src")
    assert (evens.requested, evens.emitted, evens.cancelled, evens.completed) == (10, 10, 1, 0)
    # the filter asks one more for each dropped odd element (0..18 passed through it)
    assert (src.requested, src.emitted, src.cancelled) == (19, 19, 1)


def test_failed_subscribed_and_batches_counted() -> None:
    failing = Flowable.just(1, 2).concat_with(Flowable.error(ValueError("x"))).name("f")
    failing.test().assert_error(ValueError).assert_no_violations()
    failing.test().assert_error(ValueError).assert_no_violations()
    s = snap("f")
    assert (s.subscribed, s.emitted, s.failed, s.active) == (2, 4, 2, 0)
    # a batch consumer behind the stage: batches pass and count per element
    ts = Flowable.range(0, 1000).name("b").observe_on(schedulers.single()).test().await_done()
    ts.assert_value_count(1000).assert_no_violations()
    assert snap("b").emitted == 1000 and snap("b").completed == 1


def test_tags_and_renaming() -> None:
    Flowable.range(0, 3).name("orders").tag("region", "eu").tag("env", "test").test().assert_result(0, 1, 2)
    Flowable.range(0, 2).tag("k", "v").test().assert_result(0, 1)
    Flowable.range(0, 1).name("first").name("second").test().assert_result(0)
    got = metrics.get_registry().snapshot()
    assert got["orders{env=test,region=eu}"].emitted == 3
    assert got["orders{env=test,region=eu}"].tags == {"env": "test", "region": "eu"}
    assert got["unnamed{k=v}"].emitted == 2
    assert "first" not in got and got["second"].emitted == 1


def test_gauges_of_a_stalled_chain() -> None:
    ts = Flowable.range(0, 1000).observe_on(schedulers.single(), prefetch=16).name("late").test(3)
    ts.await_count(3)
    deadline = time.monotonic() + 5
    while snap("late").queued < 13 and time.monotonic() < deadline:
        time.sleep(0.01)
    s = snap("late")
    assert (s.active, s.requested, s.emitted, s.outstanding_demand) == (1, 3, 3, 0)
    assert s.queued == 13  # prefetch 16, 3 delivered, none replenished yet (limit is 12)
    ts.cancel()
    assert snap("late").cancelled == 1 and snap("late").active == 0
    ts.assert_no_violations()


def test_a_registry_of_ones_own() -> None:
    class Mine:
        def __init__(self) -> None:
            self.made: list[metrics.StageMetrics] = []

        def stage(self, name: str, tags: tuple[tuple[str, str], ...]) -> metrics.StageMetrics:
            s = metrics.StageMetrics(name, tags)
            self.made.append(s)
            return s

    mine = Mine()
    metrics.set_registry(mine)
    Flowable.just(1, 2).name("x").test().assert_result(1, 2).assert_no_violations()
    assert [s.snapshot().emitted for s in mine.made] == [2]
    with pytest.raises(TypeError):
        metrics.set_registry(object())  # type: ignore[arg-type]


def test_prometheus_collector() -> None:
    pytest.importorskip("prometheus_client")
    from prometheus_client import CollectorRegistry, generate_latest

    Flowable.range(0, 5).name("p").tag("t", "1").test().assert_result(0, 1, 2, 3, 4)
    reg = CollectorRegistry()
    reg.register(metrics.prometheus_collector())
    text = generate_latest(reg).decode()
    assert 'rstreams_stage_emitted_total{stage="p",t="1"} 5.0' in text


def test_describe_names_the_stage_without_demand() -> None:
    tp: TestPublisher[int] = TestPublisher()
    ts = Flowable.from_publisher(tp).observe_on(schedulers.single(), prefetch=8).name("sink-side").test(2)
    tp.next(*range(8))
    ts.await_count(2)
    deadline = time.monotonic() + 5
    while "queued=6" not in debug.describe(ts) and time.monotonic() < deadline:
        time.sleep(0.01)
    picture = debug.describe(ts)
    lines = picture.splitlines()
    assert "ObserveOnSubscriber demand=0 queued=6 live on LoopWorker" in picture
    waiting = [line for line in lines if "<- waits: no demand from below" in line]
    assert len(waiting) == 1 and "name('sink-side') demand=0 emitted=2 live" in waiting[0]
    assert lines[-1].strip() == "sink    TestSubscriber"
    ts.cancel().assert_no_violations()


def test_test_subscriber_timeout_shows_the_chain() -> None:
    ts = Flowable.range(0, 100).observe_on(schedulers.single()).name("stuck").test(1)
    with pytest.raises(AssertionError) as info:
        ts.await_done(0.2)
    text = str(info.value)
    assert "chain (rstreams.debug.describe):" in text
    assert "name('stuck') demand=0 emitted=1 live" in text and "<- waits" in text
    ts.assert_no_violations()


def test_describe_of_a_disposable_and_of_a_finished_chain() -> None:
    d = Flowable.never().name("quiet").subscribe(print)
    assert debug.describe(d).splitlines()[0].startswith("source  NeverSubscription")
    d.dispose()
    ts = Flowable.just(1).test()
    assert "TestSubscriber" in debug.describe(ts)
