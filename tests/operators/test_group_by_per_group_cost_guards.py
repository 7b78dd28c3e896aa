"""group_by's per-group cost: what a group costs, and the guards that keep it correct.

A group is one ``_GroupState`` (sharing one lock with every other group of the subscription), a
``GroupedFlowable`` that lives as long as its user keeps it, and, when ``flat_map`` folds an
aggregate of it in place, one ``GroupFold``. These tests pin that down (no lock, tuple or folder per
group) and exercise the paths the savings touched: the shared lock with groups drained on several
threads, the inlined main emission racing a rule 3.9 error, the inlined claim of a fold racing a
concurrent subscriber, and the batch completion of folds (fused and ``hide()`` paths compared).
"""

from __future__ import annotations

import gc
import operator
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from rstreams import Flowable, schedulers
from rstreams.errors import ProtocolViolationError
from rstreams.testing import TestSubscriber

from .harness import check_scenarios

GROUPS = 2_000


def _live_types() -> Counter[str]:
    return Counter(type(o).__name__ for o in gc.get_objects())


def _phased(data: list[int], seen: list[Counter[str]]) -> Iterator[int]:
    """Yield ``data``, then count the live objects (every group still open: nothing completed)."""
    yield from data
    seen.append(_live_types())


@pytest.mark.parametrize("agg", ["count", "reduce"])
def test_per_group_objects_are_bounded(agg: str) -> None:
    data = [i % GROUPS for i in range(3 * GROUPS)]
    seen: list[Counter[str]] = []
    gc.collect()
    before = _live_types()

    def per_group(g: Any) -> Any:
        inner = g.count() if agg == "count" else g.reduce(operator.add)
        return inner.map(lambda n: n)  # one map: the common shape (no closure: only the fold's objects)

    ts = (
        Flowable.from_iterable(_phased(data, seen))
        .group_by(lambda x: x)
        .flat_map(per_group, max_concurrency=None)
        .test()
    )
    ts.assert_value_count(GROUPS).assert_complete().assert_no_violations()
    (during,) = seen
    grown = during - before
    assert grown["_GroupState"] == GROUPS
    assert grown["_CountFold" if agg == "count" else "_SumFold"] == GROUPS  # (reduce(operator.add))
    # no lock per group (one for all of them), no GroupedFlowable kept (the mapper dropped it),
    # no tuple of maps per group, no folder per count or reduce fold
    assert grown["lock"] < GROUPS // 10, grown["lock"]
    assert grown["GroupedFlowable"] < 10  # (a first run's lazy imports may hold one)
    assert grown["tuple"] < GROUPS // 4, grown["tuple"]  # (lazy imports of a first run add a few)
    if agg == "count":
        assert grown["_Count"] <= 1  # the shared one (created with the module on a first run)
    else:
        assert grown["_Reduce"] < 10  # the reducer and seed are the fold's: no folder kept per group


@pytest.mark.parametrize("maps", [0, 1, 3])
@pytest.mark.parametrize("agg", ["count", "reduce", "to_list"])
def test_fold_with_no_one_or_several_maps_matches_the_subscribed_chain(agg: str, maps: int) -> None:
    def inner(g: Any, hidden: bool) -> Any:
        src = g.hide() if hidden else g
        f = src.count() if agg == "count" else src.reduce(operator.add) if agg == "reduce" else src.to_list()
        for i in range(maps):
            f = f.map(_tagger(g.key, i))
        return f

    data = list(range(200))
    fused = Flowable.from_iterable(data).group_by(lambda x: x % 7).flat_map(lambda g: inner(g, False)).test()
    hidden = Flowable.from_iterable(data).group_by(lambda x: x % 7).flat_map(lambda g: inner(g, True)).test()
    fused.assert_complete().assert_no_violations()
    hidden.assert_complete().assert_no_violations()
    assert fused.values == hidden.values


def _tagger(key: Any, i: int) -> Any:
    def tag(v: Any) -> tuple[Any, int, Any]:
        return (key, i, v)

    return tag


def test_fold_scenarios_over_many_groups() -> None:
    # backpressure (one at a time), cancellation, upstream error: fused and hide() alike
    def model(xs: list[int]) -> list[Any]:
        counts: dict[int, int] = {}
        for x in xs:
            counts[x % 50] = counts.get(x % 50, 0) + 1
        return [(k, n) for k, n in counts.items()]

    def per_group(g: Any) -> Any:
        k: int = g.key
        return g.count().map(lambda n: (k, n))

    check_scenarios(
        lambda f: f.group_by(lambda x: x % 50).flat_map(per_group, max_concurrency=None),
        list(range(400)),
        model,
    )


def test_groups_drained_on_several_threads_share_the_lock_safely() -> None:
    # every group behind its own observe_on: the groups' drains run on pool threads, all on the
    # one lock of the subscription, while the upstream thread routes elements to them
    n, keys = 20_000, 64

    def per_group(g: Any) -> Any:
        k: int = g.key
        return g.observe_on(schedulers.computation()).reduce(operator.add).map(lambda s: (k, s))

    ts: TestSubscriber[tuple[int, int]] = TestSubscriber()
    Flowable.range(0, n).group_by(lambda x: x % keys).flat_map(per_group, max_concurrency=None).subscribe(ts)
    ts.await_done(30).assert_complete().assert_no_errors().assert_no_violations()
    assert dict(ts.values) == {k: sum(range(k, n, keys)) for k in range(keys)}


def test_folds_cancelled_from_another_thread_while_folding() -> None:
    started = threading.Event()
    stopped = threading.Event()

    def source() -> Iterator[int]:
        i = 0
        try:
            while True:
                if i == 5_000:
                    started.set()
                yield i
                i += 1
        finally:
            stopped.set()  # closed: the pull loop saw the cancel and dropped the iterator

    ts: TestSubscriber[Any] = TestSubscriber()
    Flowable.from_iterable(source()).subscribe_on(schedulers.new_thread()).group_by(
        lambda x: x % 1_000
    ).flat_map(lambda g: g.count(), max_concurrency=None).subscribe(ts)
    assert started.wait(10)
    ts.cancel()
    assert stopped.wait(10)
    ts.assert_not_complete().assert_no_errors().assert_no_violations()


class _BlockingMain(TestSubscriber[Any]):
    """Subscribes every group, and blocks inside ``on_next`` of the group for key 1."""

    def __init__(self) -> None:
        super().__init__(10)
        self.inside = threading.Event()
        self.release = threading.Event()
        self.groups: list[TestSubscriber[Any]] = []

    def on_next(self, item: Any) -> None:
        super().on_next(item)
        g: TestSubscriber[Any] = TestSubscriber()
        self.groups.append(g)
        item.subscribe(g)
        if item.key == 1:
            self.inside.set()
            assert self.release.wait(10)


def test_bad_request_from_another_thread_waits_for_the_group_being_emitted() -> None:
    # the inlined main emission keeps HalfSerializer's guard: the error never overlaps on_next
    ts = _BlockingMain()
    t = threading.Thread(target=lambda: Flowable.range(0, 5).group_by(lambda x: x).subscribe(ts))
    t.start()
    assert ts.inside.wait(10)
    ts.request(0)  # rule 3.9 while the upstream thread is inside on_next(group 1)
    assert not ts.errors  # held back until that on_next returned (rule 1.3)
    ts.release.set()
    t.join(10)
    assert not t.is_alive()
    ts.assert_error(Exception, match="3.9").assert_no_violations()
    assert [x.key for x in ts.values] == [0, 1]  # no group after the error
    for g in ts.groups:
        g.assert_no_violations()


def test_fold_claim_racing_a_concurrent_subscriber() -> None:
    # the fold's claim (one raw lock round trip) vs a subscriber on another thread: exactly one
    # wins; the loser gets the rule 2.12 error (the other subscriber directly, or the aggregate
    # subscribed the usual way, which fails flat_map)
    for _ in range(30):
        others: list[TestSubscriber[Any]] = []
        threads: list[threading.Thread] = []
        ts = (
            Flowable.range(0, 40)
            .group_by(lambda x: x % 4)
            .flat_map(_racing_subscriber(others, threads), max_concurrency=None)
            .test()
        )
        for th in threads:
            th.join(10)
        ts.assert_no_violations()
        for other in others:
            other.assert_no_violations()
        if ts.errors:
            ts.assert_error(ProtocolViolationError, match="2.12")
        else:
            ts.assert_complete()
            assert sorted(ts.values) == [10, 10, 10, 10]
            for other in others:  # every group was the fold's
                other.assert_error(ProtocolViolationError, match="2.12")


def _racing_subscriber(others: list[TestSubscriber[Any]], threads: list[threading.Thread]) -> Any:
    """A mapper that starts a subscriber of the group on another thread, then returns its count."""

    def per_group(g: Any) -> Any:
        other: TestSubscriber[Any] = TestSubscriber()
        others.append(other)
        th = threading.Thread(target=g.subscribe, args=(other,))
        threads.append(th)
        th.start()
        return g.count()

    return per_group


class _Odd:
    """An element whose ``+`` returns None (``bad="none"``) or raises (``bad="raise"``) past a total."""

    def __init__(self, v: int, bad: str) -> None:
        self.v = v
        self.bad = bad

    def __add__(self, other: _Odd) -> Any:
        if self.v + other.v > 10:
            if self.bad == "none":
                return None
            raise ValueError("boom in __add__")
        return _Odd(self.v + other.v, self.bad)

    def __repr__(self) -> str:
        return f"_Odd({self.v})"


@pytest.mark.parametrize("bad", ["none", "raise"])
def test_sum_fold_checks_like_the_subscribed_reduce(bad: str) -> None:
    # reduce(operator.add) folds with ``acc + item`` inline: a None sum (rule 2.13) or a raising
    # ``+`` fails like the reduce subscribed the usual way
    data = [_Odd(i % 5, bad) for i in range(30)]

    def run(hidden: bool) -> TestSubscriber[Any]:
        return (
            Flowable.from_iterable(data)
            .group_by(lambda x: x.v % 2)
            .flat_map(lambda g: (g.hide() if hidden else g).reduce(operator.add))
            .test()
        )

    fused, plain = run(False), run(True)
    fused.assert_no_violations()
    plain.assert_no_violations()
    assert len(fused.errors) == len(plain.errors) == 1
    assert type(fused.errors[0]) is type(plain.errors[0])
    assert str(fused.errors[0]) == str(plain.errors[0])
    assert repr(fused.values) == repr(plain.values)


@pytest.mark.parametrize("seed", ["", "s:"])
def test_sum_fold_of_strings_and_seed(seed: str) -> None:
    data = ["a", "b", "c", "d", "e"]
    fused = (
        Flowable.from_iterable(data)
        .group_by(lambda x: x in "ace")
        .flat_map(lambda g: g.reduce(operator.add, seed))
    )
    plain = (
        Flowable.from_iterable(data)
        .group_by(lambda x: x in "ace")
        .flat_map(lambda g: g.hide().reduce(operator.add, seed))
    )
    a, b = fused.test(), plain.test()
    a.assert_complete().assert_no_violations()
    b.assert_complete().assert_no_violations()
    assert a.values == b.values == [seed + "ace", seed + "bd"]


def test_a_group_shows_the_grouped_flowable_api_not_its_subscription_side() -> None:
    from rstreams import Flowable
    from rstreams.flowable import GroupedFlowable
    from rstreams.testing import TestSubscriber

    ts: TestSubscriber[Any] = TestSubscriber()
    Flowable.range(0, 4).group_by(lambda x: x % 2).subscribe(ts)
    ts.assert_complete().assert_no_violations()
    g = ts.values[0]
    assert isinstance(g, GroupedFlowable) and g.key == 0
    public = {n for n in dir(g) if not n.startswith("_")}
    assert public == {n for n in dir(GroupedFlowable) if not n.startswith("_")} | {"key"}
    assert not {"request", "cancel", "on_next", "on_complete", "on_error"} & public


def test_a_grouped_flowable_made_by_hand_has_a_repr() -> None:
    from rstreams.flowable import GroupedFlowable

    assert "not made by group_by" in repr(GroupedFlowable())
    ts: TestSubscriber[Any] = TestSubscriber()
    Flowable.range(0, 2).group_by(lambda x: x).subscribe(ts)
    ts.assert_complete().assert_no_violations()
    assert [repr(g) for g in ts.values] == ["GroupedFlowable(key=0)", "GroupedFlowable(key=1)"]
