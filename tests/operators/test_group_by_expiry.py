"""group_by group expiry: expire_after_count, expire_after (age), expire_after_idle (inactivity).

An expired group completes (after the elements it holds) and frees its state; the key's next
element opens a new group, emitted as a new GroupedFlowable. Time is virtual (TestScheduler).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rstreams import Flowable, plugins
from rstreams.errors import MissingBackpressureError
from rstreams.testing import TestPublisher, TestScheduler, TestSubscriber

from .harness import Boom, check_scenarios, run_one_by_one


class Groups:
    """The main subscriber's view: every emitted group, subscribed during on_next by a
    TestSubscriber (``initial`` demand), in emission order."""

    def __init__(self, initial: int = 2**63 - 1) -> None:
        self.groups: list[tuple[Any, TestSubscriber[Any], Any]] = []
        self._initial = initial

    def mapper(self, g: Any) -> Flowable[Any]:
        ts: TestSubscriber[Any] = TestSubscriber(self._initial)
        g.subscribe(ts)
        self.groups.append((g.key, ts, g))
        return Flowable.empty()

    def run(self, grouped: Flowable[Any]) -> TestSubscriber[Any]:
        main = grouped.flat_map(self.mapper).test()
        return main

    def summary(self) -> list[tuple[Any, list[Any], bool]]:
        """(key, values, completed) per group, in emission order."""
        return [(k, list(ts.values), ts.completions == 1) for k, ts, _ in self.groups]

    def assert_no_violations(self) -> None:
        for _, ts, _ in self.groups:
            ts.assert_no_violations()


# -- expire_after_count --------------------------------------------------------------------------


@pytest.mark.parametrize("hidden", [False, True], ids=["fused", "hidden"])
def test_expire_after_count_exact_signals(hidden: bool) -> None:
    src = Flowable.range(0, 7)
    if hidden:
        src = src.hide()
    gs = Groups()
    main = gs.run(src.group_by(lambda x: x % 2, expire_after_count=2))
    main.assert_complete().assert_no_errors().assert_no_violations()
    gs.assert_no_violations()
    assert gs.summary() == [
        (0, [0, 2], True),
        (1, [1, 3], True),
        (0, [4, 6], True),
        (1, [5], True),
    ]
    objs = [g for _, _, g in gs.groups]
    assert len({id(g) for g in objs}) == 4  # a re-opened key is a new GroupedFlowable


def test_expire_after_count_one_each_element_its_own_group() -> None:
    gs = Groups()
    gs.run(Flowable.range(0, 4).group_by(lambda x: 0, expire_after_count=1)).assert_complete()
    assert gs.summary() == [(0, [0], True), (0, [1], True), (0, [2], True), (0, [3], True)]
    gs.assert_no_violations()


def test_expire_after_count_scenarios() -> None:
    def model(xs: list[int]) -> list[list[int]]:
        """Each group's elements, in the order the groups complete (at their 4th element, or at
        the end in the order they opened)."""
        done: list[list[int]] = []
        open_: dict[int, list[int]] = {}
        for x in xs:
            lst = open_.setdefault(x % 3, [])
            lst.append(x)
            if len(lst) == 4:
                done.append(open_.pop(x % 3))
        return done + list(open_.values())

    check_scenarios(
        lambda f: f.group_by(lambda x: x % 3, expire_after_count=4).flat_map(
            lambda g: g.to_list(), max_concurrency=None
        ),
        list(range(40)),
        model,
    )


def test_expire_after_count_with_folds_equals_unfused() -> None:
    data = list(range(1000))
    for per_group in (lambda g: g.count(), lambda g: g.hide().count()):
        ts = Flowable.from_iterable(data).group_by(lambda x: x % 7, expire_after_count=10).flat_map(per_group).test()
        ts.assert_complete().assert_no_violations()
        assert sum(ts.values) == 1000
        assert sorted(ts.values)[-1] == 10


def test_expire_after_count_one_by_one() -> None:
    ts = run_one_by_one(
        Flowable.range(0, 100).group_by(lambda x: x % 4, expire_after_count=5).flat_map(lambda g: g, max_concurrency=None)
    )
    ts.assert_complete().assert_no_errors().assert_no_violations()
    assert sorted(ts.values) == list(range(100))


# -- expire_after (age) --------------------------------------------------------------------------


def test_expire_after_exact_times() -> None:
    sched = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    gs = Groups()
    main = gs.run(Flowable.from_publisher(tp).group_by(lambda x: x % 2, expire_after=10, scheduler=sched))
    tp.next(0)  # key 0 opens at t=0, due at 10
    sched.advance_to(4)
    tp.next(1)  # key 1 opens at t=4, due at 14
    sched.advance_to(9.999)
    tp.next(2)
    assert gs.summary() == [(0, [0, 2], False), (1, [1], False)]
    sched.advance_to(10)
    assert gs.summary() == [(0, [0, 2], True), (1, [1], False)]
    tp.next(4)  # after the expiry: a new group for key 0 (due at 20)
    sched.advance_to(14)
    assert gs.summary() == [(0, [0, 2], True), (1, [1], True), (0, [4], False)]
    tp.complete()
    assert gs.summary() == [(0, [0, 2], True), (1, [1], True), (0, [4], True)]
    main.assert_complete().assert_no_violations()
    gs.assert_no_violations()
    assert sched.pending == 0


def test_expire_after_idle_moves_with_each_element() -> None:
    sched = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    gs = Groups()
    gs.run(Flowable.from_publisher(tp).group_by(lambda x: 0, expire_after_idle=5, scheduler=sched))
    for t in (0, 3, 6, 9):  # each element within 5 s of the previous one
        sched.advance_to(t)
        tp.next(t)
    sched.advance_to(13.999)
    assert gs.summary() == [(0, [0, 3, 6, 9], False)]
    sched.advance_to(14)  # 5 s after the last element
    assert gs.summary() == [(0, [0, 3, 6, 9], True)]
    sched.advance_to(20)
    tp.next(20)
    assert gs.summary() == [(0, [0, 3, 6, 9], True), (0, [20], False)]
    assert sched.pending == 1  # the new group's one timer (the old one's was used up)
    tp.complete()
    assert sched.pending == 0
    gs.assert_no_violations()


def test_age_and_idle_whichever_first() -> None:
    sched = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    gs = Groups()
    gs.run(Flowable.from_publisher(tp).group_by(lambda x: 0, expire_after=8, expire_after_idle=3, scheduler=sched))
    for t in (0, 2, 4, 6):
        sched.advance_to(t)
        tp.next(t)
    sched.advance_to(7.9)
    assert gs.summary() == [(0, [0, 2, 4, 6], False)]
    sched.advance_to(8)  # the age limit comes before the idle limit (6 + 3 = 9)
    assert gs.summary() == [(0, [0, 2, 4, 6], True)]
    tp.next(8)
    sched.advance_to(11)  # idle: 8 + 3
    assert gs.summary() == [(0, [0, 2, 4, 6], True), (0, [8], True)]
    gs.assert_no_violations()


@pytest.mark.parametrize("emitter_first", [True, False], ids=["element-task-first", "timer-first"])
def test_element_at_the_expiry_instant_goes_to_exactly_one_group(emitter_first: bool) -> None:
    """An element at the deadline's exact virtual instant opens the new group, whether its task
    runs before the group's timer (same instant, earlier FIFO slot) or after it."""
    sched = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    gs = Groups()
    emitter = sched.create_worker()
    if emitter_first:
        emitter.schedule(lambda: tp.next(2), 10)  # queued before the group's timer: runs first at t=10
    main = gs.run(Flowable.from_publisher(tp).group_by(lambda x: 0, expire_after=10, scheduler=sched))
    tp.next(1)  # opens the group at t=0; its timer is due at t=10
    if not emitter_first:
        emitter.schedule(lambda: tp.next(2), 10)  # queued after the timer: runs second at t=10
    sched.advance_to(10)
    assert gs.summary() == [(0, [1], True), (0, [2], False)]
    tp.complete()
    assert gs.summary() == [(0, [1], True), (0, [2], True)]
    main.assert_complete().assert_no_violations()
    gs.assert_no_violations()


def test_expired_group_delivers_what_it_holds_before_completing_one_by_one() -> None:
    sched = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    gs = Groups(initial=0)  # the groups' subscribers request nothing at first
    gs.run(Flowable.from_publisher(tp).group_by(lambda x: 0, expire_after=5, scheduler=sched, slow_group="wait"))
    tp.next(1, 2, 3)
    sched.advance_to(5)  # expired while holding three elements
    tp.next(4)  # a new group
    (_, ts_old, _), (_, ts_new, _) = gs.groups
    ts_old.assert_no_values().assert_not_complete()
    ts_old.request(1)
    ts_old.assert_values(1).assert_not_complete()
    ts_old.request(1)
    ts_old.assert_values(1, 2).assert_not_complete()
    ts_old.request(1)
    ts_old.assert_result(1, 2, 3)
    ts_new.request(5)
    ts_new.assert_values(4).assert_not_complete()
    gs.assert_no_violations()


# -- cancellation, termination, errors ------------------------------------------------------------


def test_cancelled_inner_is_not_expired_and_its_key_reopens() -> None:
    sched = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    gs = Groups()
    main = gs.run(Flowable.from_publisher(tp).group_by(lambda x: x % 2, expire_after=10, scheduler=sched))
    tp.next(0, 1)
    gs.groups[0][1].cancel()  # key 0's subscriber leaves
    sched.advance_to(10)  # key 1 expires; the cancelled group gets no signal
    tp.next(2)  # key 0 again: a new group
    assert gs.summary() == [(0, [0], False), (1, [1], True), (0, [2], False)]
    assert not tp.was_cancelled
    tp.complete()
    main.assert_complete().assert_no_violations()
    gs.assert_no_violations()


def test_main_cancelled_and_every_group_expired_cancels_the_upstream() -> None:
    sched = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    gs = Groups()
    main = gs.run(Flowable.from_publisher(tp).group_by(lambda x: x % 3, expire_after_idle=2, scheduler=sched))
    tp.next(0, 1, 2)
    main.cancel()  # no new groups; the open ones keep the upstream alive until they expire
    tp.next(3)
    assert not tp.was_cancelled
    sched.advance_to(2)
    assert tp.was_cancelled
    assert [c for _, _, c in gs.summary()] == [True, True, True]
    assert sched.pending == 0
    gs.assert_no_violations()


def test_upstream_error_fails_the_open_groups_and_stops_the_timers() -> None:
    sched = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    gs = Groups()
    main = gs.run(Flowable.from_publisher(tp).group_by(lambda x: x % 2, expire_after=5, scheduler=sched))
    tp.next(0, 1)
    tp.error(Boom("up"))
    main.assert_error(Boom).assert_no_violations()
    for _, ts, _ in gs.groups:
        ts.assert_error(Boom).assert_no_violations()
    assert sched.pending == 0


def test_raising_key_fn_with_expiry() -> None:
    def key(x: int) -> int:
        if x == 3:
            raise Boom("key")
        return x % 2

    for src in (Flowable.range(0, 10), Flowable.range(0, 10).hide()):
        gs = Groups()
        main = gs.run(src.group_by(key, expire_after_count=2))
        main.assert_error(Boom).assert_no_violations()
        gs.assert_no_violations()


def test_unhashable_key_and_none_value_with_expiry() -> None:
    main = Flowable.range(0, 3).hide().group_by(lambda x: [x], expire_after_count=2).flat_map(lambda g: g).test()
    main.assert_error(TypeError).assert_no_violations()
    main = Flowable.range(0, 3).group_by(lambda x: x, lambda x: None, expire_after_count=2).flat_map(lambda g: g).test()
    main.assert_error(Exception).assert_no_violations()
    assert "None" in str(main.errors[0])


def test_no_demand_for_a_reopened_group_is_missing_backpressure() -> None:
    ts: TestSubscriber[Any] = TestSubscriber(1)
    with plugins.collect_errors():
        Flowable.range(0, 4).group_by(lambda x: 0, expire_after_count=2).subscribe(ts)
    ts.assert_error(MissingBackpressureError).assert_no_violations()


# -- arguments ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"expire_after_count": 0}, ValueError),
        ({"expire_after_count": True}, TypeError),
        ({"expire_after_count": 1.5}, TypeError),
        ({"expire_after": 0}, ValueError),
        ({"expire_after": -1.0}, ValueError),
        ({"expire_after": "1"}, TypeError),
        ({"expire_after_idle": 0.0}, ValueError),
        ({"expire_after_idle": float("nan")}, ValueError),
        ({"scheduler": TestScheduler()}, ValueError),
        ({"expire_after": 1.0, "scheduler": object()}, TypeError),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error, match="group_by"):
        Flowable.range(0, 3).group_by(lambda x: x, **kwargs)


def test_default_scheduler_is_used_for_durations() -> None:
    # a long duration on the default (computation) scheduler: the stream ends before any expiry
    ts = (
        Flowable.range(0, 10)
        .group_by(lambda x: x % 2, expire_after=3600)
        .flat_map(lambda g: g.to_list())
        .test()
        .await_done(5)
    )
    ts.assert_complete().assert_no_violations()
    assert sorted(map(tuple, ts.values)) == [(0, 2, 4, 6, 8), (1, 3, 5, 7, 9)]


def _keys(f: Callable[[int], int]) -> Callable[[int], int]:
    return f


def test_groups_with_expiry_on_a_real_scheduler_lose_no_element() -> None:
    """Timers on the computation scheduler's thread while elements arrive on this one."""
    n = 20_000
    ts = (
        Flowable.range(0, n)
        .group_by(_keys(lambda x: x % 50), expire_after_idle=0.0005)
        .flat_map(lambda g: g.count(), max_concurrency=None)
        .test()
        .await_done(10)
    )
    ts.assert_complete().assert_no_errors().assert_no_violations()
    assert sum(ts.values) == n


@pytest.mark.parametrize("expiry", [{"expire_after_count": 7}, {"expire_after_idle": 0.0002}, {"expire_after": 0.001}])
def test_groups_consumed_on_other_threads_with_expiry_lose_no_element(expiry: dict[str, Any]) -> None:
    """Each group is consumed on a scheduler thread (observe_on) while the upstream runs here and
    timers run on the computation scheduler: every element arrives once, nothing overlaps."""
    from rstreams import schedulers

    n = 5_000
    ts = (
        Flowable.range(0, n)
        .group_by(lambda x: x % 13, **expiry)
        .flat_map(lambda g: g.observe_on(schedulers.io()).to_list(), max_concurrency=None)
        .test()
        .await_done(20)
    )
    ts.assert_complete().assert_no_errors().assert_no_violations()
    assert sorted(x for lst in ts.values for x in lst) == list(range(n))
    for lst in ts.values:  # a group's elements in upstream order, all of one key
        assert lst == sorted(lst) and len({x % 13 for x in lst}) == 1


def test_expiry_with_bounded_concurrency_and_folds() -> None:
    ts = (
        Flowable.range(0, 3_000)
        .group_by(lambda x: x % 5, expire_after_count=50)
        .flat_map(lambda g: g.reduce(lambda a, b: a + b).map(lambda s: (g.key, s)), max_concurrency=5)
        .test()
    )
    ts.assert_complete().assert_no_errors().assert_no_violations()
    assert len(ts.values) == 60
    assert sum(s for _, s in ts.values) == sum(range(3_000))
