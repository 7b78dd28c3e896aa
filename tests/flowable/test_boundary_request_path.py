"""The bounded request path of a fused source into a batch consumer (what a thread boundary asks
of it 128 at a time), and the strict wrapper's batch delivery: demand accounted across batches,
re-entrant requests, cancellation mid-batch, demand summing past ``2**63 - 1`` (rule 3.17), an
element pulled ahead going first, and a terminal from another thread never overlapping a batch.
The rule tests (``test_rule_*``) are in ``tests/spec/test_rules_boundary_request_path.py``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from operators.harness import Boom
from rstreams import MAX_DEMAND, Flowable
from rstreams._internal.subscribers import StrictSubscriber
from rstreams._internal.subscriptions import EMPTY
from rstreams.testing import TestSubscriber


class BatchProbe(TestSubscriber[Any]):
    """A TestSubscriber that takes the library-internal batches (as observe_on, the aggregates
    and the iterator bridges do): every element still goes through ``on_next`` (the rule 1.1
    and 1.3 checks), and each batch's size and the demand outstanding when it came are kept."""

    __test__ = False

    def __init__(self, initial_request: int = MAX_DEMAND, on_batch: Callable[[BatchProbe, list[Any]], object] | None = None) -> None:
        super().__init__(initial_request)
        self.batches: list[int] = []
        self.outstanding: list[int] = []
        self._hook = on_batch

    def on_next_batch(self, items: list[Any]) -> None:
        self.batches.append(len(items))
        self.outstanding.append(self._demand)
        for x in items:
            self.on_next(x)
        if self._hook is not None:
            self._hook(self, items)


def _gen(n: int) -> Iterator[int]:
    yield from range(n)  # no length_hint: the end is found by pulling one ahead


SOURCES: dict[str, Callable[[int], Flowable[int]]] = {
    "range": lambda n: Flowable.range(0, n),  # sized, no stages: the size answers the look-ahead
    "range.map": lambda n: Flowable.range(0, n).map(lambda x: x),  # stages over a sized root
    "list": lambda n: Flowable.from_iterable(list(range(n))),  # length_hint
    "generator": lambda n: Flowable.from_iterable(_gen(n)),  # unsized: pulled one ahead
    "range.take": lambda n: Flowable.range(0, n + 50).take(n),
}


def _drive(f: Flowable[int], amounts: list[int]) -> BatchProbe:
    ts = BatchProbe(0)
    f.subscribe(ts)
    i = 0
    while not (ts.completions or ts.errors) and i < 10_000:
        ts.request(amounts[i % len(amounts)])
        i += 1
    return ts


@pytest.mark.parametrize("name", sorted(SOURCES))
@pytest.mark.parametrize("amounts", [[1], [3], [96], [128], [4096 + 5], [7, 1, 128, 2]])
def test_requests_are_served_in_batches_within_demand_and_complete_exactly(name: str, amounts: list[int]) -> None:
    n = 1000
    ts = _drive(SOURCES[name](n), amounts)
    ts.assert_result(*range(n)).assert_no_violations()
    assert sum(ts.batches) == n
    assert all(0 < b <= max(o, 0) for b, o in zip(ts.batches, ts.outstanding, strict=True))
    assert max(ts.batches) <= 4096  # one batch is bounded, however much is requested


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_same_signals_as_one_by_one_and_hidden(name: str) -> None:
    n = 300
    batched = _drive(SOURCES[name](n), [5])
    plain: TestSubscriber[int] = TestSubscriber(0)
    SOURCES[name](n).hide().subscribe(plain)
    while not plain.completions:
        plain.request(5)
    assert batched.values == plain.values and batched.completions == plain.completions == 1
    batched.assert_no_violations()
    plain.assert_no_violations()


@pytest.mark.parametrize("name", ["range", "generator"])
def test_eager_completion_once_the_last_element_was_requested(name: str) -> None:
    ts = BatchProbe(0)
    SOURCES[name](10).subscribe(ts)
    ts.request(10)
    ts.assert_result(*range(10)).assert_no_violations()  # complete without another request
    assert ts.batches == [10]


def test_an_element_pulled_ahead_goes_first_in_the_next_batch() -> None:
    pulled: list[int] = []

    def gen() -> Iterator[int]:
        for i in range(7):
            pulled.append(i)
            yield i

    ts = BatchProbe(0)
    Flowable.from_iterable(gen()).subscribe(ts)
    ts.request(3)
    assert ts.values == [0, 1, 2] and pulled == [0, 1, 2, 3]  # 3 is held to know the end
    ts.request(3)
    assert ts.values == [0, 1, 2, 3, 4, 5] and ts.batches == [3, 3]
    ts.request(3)
    ts.assert_result(*range(7)).assert_no_violations()
    assert ts.batches == [3, 3, 1]


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_cancel_inside_a_batch_stops_the_loop(name: str) -> None:
    ts = BatchProbe(0, lambda ts, items: ts.cancel())
    SOURCES[name](1000).subscribe(ts)
    ts.request(50)
    ts.request(50)  # rule 3.6: nothing after a cancel
    assert ts.values == list(range(50)) and not ts.completions and not ts.errors
    ts.assert_no_violations()


def test_cancel_from_another_thread_between_requests() -> None:
    ts = BatchProbe(0)
    Flowable.range(0, 10**6).subscribe(ts)
    ts.request(128)
    t = threading.Thread(target=ts.cancel)
    t.start()
    t.join(5)
    ts.request(128)
    assert ts.values == list(range(128)) and not ts.completions
    ts.assert_no_violations()


def test_a_failure_mid_batch_hands_over_the_prefix_then_the_error() -> None:
    def gen() -> Iterator[int]:
        yield from range(70)
        raise Boom()

    ts = _drive(Flowable.from_iterable(gen()), [32])
    ts.assert_values(*range(70)).assert_error(Boom).assert_no_violations()


# -- the strict wrapper's batches ------------------------------------------------------------


class _Foreign:
    """A plain subscriber (no library attributes): what ``subscribe`` wraps."""

    def __init__(self, cancel_at: int | None = None, raise_at: int | None = None) -> None:
        self.values: list[int] = []
        self.errors: list[BaseException] = []
        self.completions = 0
        self.s: Any = None
        self._cancel_at = cancel_at
        self._raise_at = raise_at

    def on_subscribe(self, s: Any) -> None:
        self.s = s
        s.request(MAX_DEMAND)

    def on_next(self, x: int) -> None:
        if x == self._raise_at:
            raise Boom()
        self.values.append(x)
        if x == self._cancel_at:
            self.s.cancel()

    def on_error(self, e: BaseException) -> None:
        self.errors.append(e)

    def on_complete(self) -> None:
        self.completions += 1


class _LockedStrict(StrictSubscriber[Any]):
    """The strict wrapper as a free-threaded build runs it (its locked protocol)."""

    __slots__ = ()
    on_next = StrictSubscriber._on_next_locked
    on_next_batch = StrictSubscriber._on_next_batch_locked


STRICT: dict[str, Any] = {"ordered": StrictSubscriber, "locked": _LockedStrict}


@pytest.mark.parametrize("variant", sorted(STRICT))
def test_strict_batch_delivery_stops_at_a_cancel_from_inside_on_next(variant: str) -> None:
    s = _Foreign(cancel_at=40)
    w = STRICT[variant](s)
    w.on_subscribe(EMPTY)
    w.on_next_batch(list(range(128)))
    w.on_next_batch(list(range(128, 256)))
    w.on_complete()
    assert s.values == list(range(41)) and s.completions == 0 and not s.errors


@pytest.mark.parametrize("variant", sorted(STRICT))
def test_strict_batch_then_terminal_in_order(variant: str) -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    w = STRICT[variant](ts)
    w.on_subscribe(EMPTY)
    w.on_next_batch([1, 2, 3])
    w.on_complete()
    w.on_next_batch([4])  # after the terminal: dropped
    ts.assert_result(1, 2, 3).assert_no_violations()


def test_a_foreign_subscriber_behind_a_boundary_gets_every_element_in_order() -> None:
    from rstreams import schedulers

    s = _Foreign()
    done = threading.Event()
    orig = s.on_complete

    def complete() -> None:
        orig()
        done.set()

    s.on_complete = complete  # type: ignore[method-assign]
    Flowable.range(0, 20_000).subscribe_on(schedulers.single()).observe_on(schedulers.new_thread()).subscribe(s)
    assert done.wait(10)
    assert s.values == list(range(20_000)) and s.completions == 1 and not s.errors


# -- observe_on's drain: its exit check and its downstream hooks looked up once -----------------


def test_observe_on_drain_goes_idle_at_zero_demand_and_resumes_on_the_next_request() -> None:
    from rstreams.testing import TestScheduler

    sch = TestScheduler()
    ts = BatchProbe(0)
    Flowable.range(0, 300).observe_on(sch, prefetch=16).subscribe(ts)
    sch.trigger_actions()
    assert ts.values == []  # elements queued, no demand: the drain left
    for k in (5, 11, 16, 100, 200):
        ts.request(k)
        assert sch.pending > 0  # the request scheduled a drain
        sch.trigger_actions()
    ts.assert_result(*range(300)).assert_no_violations()
    assert all(0 < b <= o for b, o in zip(ts.batches, ts.outstanding, strict=True))


def test_observe_on_error_cuts_ahead_of_queued_elements_once_the_drain_is_idle() -> None:
    from rstreams.testing import TestPublisher, TestScheduler

    sch = TestScheduler()
    pub: TestPublisher[int] = TestPublisher()
    ts = BatchProbe(0)
    Flowable.from_publisher(pub).observe_on(sch, prefetch=16).subscribe(ts)
    sch.trigger_actions()
    pub.next(1)
    pub.next(2)
    sch.trigger_actions()  # no demand: both stay queued
    pub.error(Boom())
    sch.trigger_actions()
    ts.assert_no_values().assert_error(Boom).assert_no_violations()


def test_observe_on_cancel_drops_the_downstream_and_its_hooks() -> None:
    import gc
    import weakref

    from rstreams.testing import TestScheduler

    sch = TestScheduler()
    ts = BatchProbe(0)
    Flowable.range(0, 300).observe_on(sch, prefetch=16).subscribe(ts)
    ts.request(5)
    sch.trigger_actions()
    ref = weakref.ref(ts)
    ts.cancel()
    sch.trigger_actions()
    assert ts.values == list(range(5))
    ts.assert_no_violations()
    del ts
    gc.collect()
    assert ref() is None  # rule 3.13: nothing upstream keeps the cancelled subscriber
