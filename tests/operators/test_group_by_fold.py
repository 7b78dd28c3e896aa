"""flat_map(lambda g: g.<aggregate>()[.map(f)]) over group_by: the fused group fold.

flat_map recognizes an aggregate (count, reduce, to_list, collect, all, any, ...) of a fresh group,
optionally followed by ``map`` calls, and lets the group fold in place (group_by's ``GroupFold``).
Every test compares it with the same chain subscribed the usual way (``g.hide()`` in front of the
aggregate defeats the recognition): same values, same errors, same cancellation, no violations.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import pytest

from rstreams import Flowable, plugins
from rstreams.flowable.operators._group_by import GroupFold, group_fold
from rstreams.testing import TestSubscriber

from .harness import Boom, check_scenarios, run_one_by_one

Mapper = Callable[[Any], Flowable[Any]]


def _both(per_group: Callable[[Any, bool], Flowable[Any]]) -> tuple[Mapper, Mapper]:
    """The mapper as written (fused) and with ``g.hide()`` in front (subscribed the usual way)."""
    return (lambda g: per_group(g, False)), (lambda g: per_group(g, True))


def _src(g: Any, hidden: bool) -> Any:
    return g.hide() if hidden else g


def _run(mapper: Mapper, data: list[int], keys: int, **kw: Any) -> TestSubscriber[Any]:
    ts = Flowable.from_iterable(data).group_by(lambda x: x % keys).flat_map(mapper, **kw).test()
    ts.assert_no_violations()
    return ts


def _signals(ts: TestSubscriber[Any]) -> tuple[Any, ...]:
    err = ts.errors[0] if ts.errors else None
    return (sorted(map(repr, ts.values)), ts.completions, type(err), str(err) if err else None)


# (group or its hidden stand-in, key) -> the inner Flowable
AGGREGATES: dict[str, Callable[[Any, Any], Flowable[Any]]] = {
    "count": lambda g, k: g.count(),
    "reduce": lambda g, k: g.reduce(operator.add),
    "reduce_seed": lambda g, k: g.reduce(lambda a, x: [*a, x], []),
    "to_list": lambda g, k: g.to_list(),
    "collect": lambda g, k: g.collect(list, lambda acc, x: acc.append(x)),
    "all": lambda g, k: g.all(lambda x: x < 50),
    "any": lambda g, k: g.any(lambda x: x > 50),
    "contains": lambda g, k: g.contains(42),
    "count_map": lambda g, k: g.count().map(lambda n: (k, n)),
    "reduce_map_map": lambda g, k: g.reduce(operator.add).map(lambda s: s * 2).map(lambda s: (k, s)),
}


@pytest.mark.parametrize("name", sorted(AGGREGATES))
@pytest.mark.parametrize("keys", [1, 3, 17])
def test_fused_fold_matches_subscribed_chain(name: str, keys: int) -> None:
    agg = AGGREGATES[name]
    fused, hidden = _both(lambda g, h: agg(_src(g, h), g.key))
    data = list(range(100))
    a = _run(fused, data, keys)
    b = _run(hidden, data, keys)
    a.assert_complete().assert_no_errors()
    assert _signals(a) == _signals(b)


@pytest.mark.parametrize("name", ["count", "reduce", "reduce_seed", "to_list", "count_map"])
def test_fused_fold_scenarios(name: str) -> None:
    agg = AGGREGATES[name]
    data = list(range(60))

    def model(xs: list[int]) -> list[Any]:
        out: list[Any] = []
        for k in (0, 1, 2):  # the groups complete together, in key order of their creation
            g = Flowable.from_iterable([x for x in xs if x % 3 == k])
            out.extend(agg(g, k).test().values)
        return out

    check_scenarios(lambda f: f.group_by(lambda x: x % 3).flat_map(lambda g: agg(g, g.key)), data, model)


def test_recognized_only_for_a_fresh_group() -> None:
    seen: list[Any] = []

    def mapper(g: Any) -> Flowable[Any]:
        p = g.count()
        fold = group_fold(p, _NoParent())
        seen.append(type(fold).__name__ if fold is not None else None)
        assert group_fold(p, _NoParent()) is None  # the group's one subscription is taken
        assert group_fold(g.hide().count(), _NoParent()) is None
        assert group_fold(Flowable.range(0, 3).count(), _NoParent()) is None
        return Flowable.empty()

    Flowable.range(0, 4).group_by(lambda x: x % 2).flat_map(mapper).test().assert_no_violations()
    assert seen == ["_CountFold", "_CountFold"]
    assert issubclass(_CountFoldType(), GroupFold)


def _CountFoldType() -> type:  # noqa: N802 - reads like the class it returns
    from rstreams.flowable.operators._group_by import _CountFold

    return _CountFold


class _NoParent:
    _cancelled = False

    def _inner_last(self, inner: Any, value: Any) -> None:
        pass

    def _inner_done(self, inner: Any) -> None:
        pass

    def _inner_error(self, inner: Any, error: BaseException) -> None:
        pass


def test_second_subscription_of_a_folded_group_gets_rule_2_12_error() -> None:
    groups: list[Any] = []

    def mapper(g: Any) -> Flowable[Any]:
        groups.append(g)
        return g.count()

    Flowable.range(0, 4).group_by(lambda x: x % 2).flat_map(mapper).test().assert_result(2, 2)
    late = groups[0].test()
    late.assert_error(Exception)
    assert "2.12" in str(late.errors[0]) or "only once" in str(late.errors[0])


@pytest.mark.parametrize("delay_error", [False, True])
def test_raising_reducer_fails_like_the_subscribed_chain(delay_error: bool) -> None:
    def red(a: int, x: int) -> int:
        if x == 7:
            raise Boom("x == 7")
        return a + x

    fused, hidden = _both(lambda g, h: _src(g, h).reduce(red))
    with plugins.collect_errors():
        a = _run(fused, list(range(20)), 3, delay_error=delay_error)
        b = _run(hidden, list(range(20)), 3, delay_error=delay_error)
    a.assert_error(Boom)
    assert _signals(a) == _signals(b)


def test_reducer_returning_none_is_an_error() -> None:
    fused, hidden = _both(lambda g, h: _src(g, h).reduce(lambda a, x: None))
    a = _run(fused, list(range(10)), 2)
    b = _run(hidden, list(range(10)), 2)
    a.assert_error(Exception)
    assert _signals(a) == _signals(b)
    assert "None" in str(a.errors[0])


def test_map_returning_none_or_raising_is_an_error() -> None:
    for f in (lambda n: None, lambda n: 1 // 0):
        fused, hidden = _both(lambda g, h, f=f: _src(g, h).count().map(f))
        a = _run(fused, list(range(10)), 2)
        b = _run(hidden, list(range(10)), 2)
        a.assert_error(Exception)
        assert _signals(a) == _signals(b)


def test_collect_supplier_raising() -> None:
    def supplier() -> list[int]:
        raise Boom("supplier")

    fused, hidden = _both(lambda g, h: _src(g, h).collect(supplier, lambda acc, x: None))
    with plugins.collect_errors():
        a = _run(fused, list(range(10)), 2)
        b = _run(hidden, list(range(10)), 2)
    a.assert_error(Boom)
    assert _signals(a) == _signals(b)


def test_empty_reduce_of_a_group_never_happens_but_reduce_of_filtered_group_completes_empty() -> None:
    # a filter in front of the aggregate defeats the recognition; both complete empty per group
    fused, hidden = _both(lambda g, h: _src(g, h).filter(lambda x: x > 1000).reduce(operator.add))
    a = _run(fused, list(range(10)), 2)
    b = _run(hidden, list(range(10)), 2)
    a.assert_result()
    assert _signals(a) == _signals(b)


def test_short_circuit_cancels_the_group_and_a_later_element_opens_a_new_group() -> None:
    # all(x < 5) is decided by 6 (key 0) and 5 (key 1): each group is cancelled, and every later
    # element of its key opens a new group, decided at once (RxJava's groupBy does the same)
    fused, hidden = _both(lambda g, h: _src(g, h).all(lambda x: x < 5).map(lambda b: (g.key, b)))
    a = _run(fused, list(range(10)), 2)
    b = _run(hidden, list(range(10)), 2)
    a.assert_complete()
    assert _signals(a) == _signals(b)
    assert sorted(a.values) == [(0, False), (0, False), (1, False), (1, False), (1, False)]


def test_upstream_error_reaches_the_folds() -> None:
    src = Flowable.range(0, 10).concat_with(Flowable.error(Boom("up")))
    for mapper in _both(lambda g, h: _src(g, h).count()):
        ts = src.group_by(lambda x: x % 3).flat_map(mapper).test()
        ts.assert_error(Boom).assert_no_values().assert_no_violations()


def test_cancel_downstream_cancels_the_folds_and_the_upstream() -> None:
    cancelled: list[bool] = []
    src = Flowable.range(0, 1_000_000).do_on_cancel(lambda: cancelled.append(True))
    ts: TestSubscriber[Any] = TestSubscriber(0)
    src.group_by(lambda x: x % 5).flat_map(lambda g: g.count()).take(1).subscribe(ts)
    ts.cancel()
    ts.assert_no_values().assert_no_violations()
    # nothing left running: the source is either cancelled or never pulled beyond its window
    src2 = Flowable.never().group_by(lambda x: x).flat_map(lambda g: g.count())
    ts2 = src2.test()
    ts2.cancel()
    ts2.assert_no_values().assert_no_violations()


def test_one_by_one_and_bounded_concurrency() -> None:
    data = list(range(300))
    want = sorted(sum(x for x in data if x % 7 == k) for k in range(7))
    for mc in (None, 7, 8):
        ts = run_one_by_one(
            Flowable.from_iterable(data)
            .group_by(lambda x: x % 7)
            .flat_map(lambda g: g.reduce(operator.add), max_concurrency=mc)
        )
        ts.assert_complete().assert_no_errors().assert_no_violations()
        assert sorted(ts.values) == want


def test_many_groups_fused_equals_dict() -> None:
    n, keys = 20_000, 2_000
    ts = (
        Flowable.range(0, n)
        .group_by(lambda x: x % keys)
        .flat_map(lambda g: g.reduce(operator.add).map(lambda s: (g.key, s)), max_concurrency=None)
        .test()
    )
    ts.assert_complete().assert_no_violations()
    want: dict[int, int] = {}
    for x in range(n):
        want[x % keys] = want.get(x % keys, 0) + x
    assert dict(ts.values) == want


def test_abandoned_groups_fold_like_the_subscribed_chain() -> None:
    """Groups that reach flat_map after group_by's on_next returned (observe_on in between) are
    abandoned: each holds its one element and is complete; folded or subscribed, the same."""
    from rstreams import schedulers

    for mapper in _both(lambda g, h: _src(g, h).count()):
        ts = (
            Flowable.range(0, 30)
            .group_by(lambda x: x % 3)
            .observe_on(schedulers.single())
            .flat_map(mapper)
            .test()
            .await_done(5)
        )
        ts.assert_complete().assert_no_errors().assert_no_violations()
        assert ts.values == [1] * 30


def test_delay_error_keeps_the_other_folds_going() -> None:
    def red(a: int, x: int) -> int:
        if x == 4:
            raise Boom("x == 4")
        return a + x

    fused, hidden = _both(lambda g, h: _src(g, h).reduce(red).map(lambda s: (g.key, s)))
    with plugins.collect_errors():
        a = _run(fused, list(range(12)), 3, delay_error=True)
        b = _run(hidden, list(range(12)), 3, delay_error=True)
    a.assert_error(Boom)
    # key 1 failed at 4; 7 and 10 opened a new key-1 group (the failed one was cancelled)
    assert sorted(a.values) == sorted(b.values) == [(0, 18), (1, 7 + 10), (2, 2 + 5 + 8 + 11)]
    assert _signals(a) == _signals(b)


# -- completion of the folds in one batch (group_by hands flat_map the results of a run of folds) --


def _exact(ts: TestSubscriber[Any]) -> tuple[Any, ...]:
    err = ts.errors[0] if ts.errors else None
    return (list(ts.values), ts.completions, type(err), str(err) if err else None)


@pytest.mark.parametrize("name", sorted(AGGREGATES))
def test_batched_completion_emits_in_group_order_like_the_subscribed_chain(name: str) -> None:
    agg = AGGREGATES[name]
    fused, hidden = _both(lambda g, h: agg(_src(g, h), g.key))
    data = [(x * 7919) % 1000 for x in range(400)]
    for mc in (None, 40, 64):
        a = _run(fused, data, 40, max_concurrency=mc)
        b = _run(hidden, data, 40, max_concurrency=mc)
        a.assert_complete().assert_no_errors()
        assert _exact(a) == _exact(b)  # order included: the groups complete in the order they opened


def test_batched_completion_into_a_batch_taking_downstream() -> None:
    """to_list takes a run of results as one list; the values and their order are those of the
    subscribed chain."""
    data = list(range(5_000))
    fused, hidden = _both(lambda g, h: _src(g, h).reduce(operator.add).map(lambda s: (g.key, s)))
    outs = []
    for mapper in (fused, hidden):
        ts = (
            Flowable.from_iterable(data)
            .group_by(lambda x: x % 300)
            .flat_map(mapper, max_concurrency=None)
            .to_list()
            .test()
        )
        ts.assert_complete().assert_no_violations()
        outs.append(ts.values)
    assert outs[0] == outs[1]
    assert [k for k, _ in outs[0][0]] == list(range(300))


def test_batched_completion_respects_demand_one_at_a_time() -> None:
    data = list(range(200))
    fused, hidden = _both(lambda g, h: _src(g, h).count().map(lambda n: (g.key, n)))
    runs = []
    for mapper in (fused, hidden):
        ts = run_one_by_one(
            Flowable.from_iterable(data).group_by(lambda x: x % 13).flat_map(mapper, max_concurrency=None)
        )
        ts.assert_complete().assert_no_errors().assert_no_violations()
        runs.append(ts.values)
    assert runs[0] == runs[1]
    assert sorted(runs[0]) == [(k, len(range(k, 200, 13))) for k in range(13)]


def test_batched_completion_with_partial_demand_emits_the_rest_on_request() -> None:
    fused, hidden = _both(lambda g, h: _src(g, h).count().map(lambda n: (g.key, n)))
    runs = []
    for mapper in (fused, hidden):
        ts: TestSubscriber[Any] = TestSubscriber(0)
        Flowable.range(0, 100).group_by(lambda x: x % 10).flat_map(mapper, max_concurrency=None).subscribe(ts)
        ts.request(4)
        ts.assert_value_count(4).assert_not_complete()
        ts.request(3)
        ts.assert_value_count(7).assert_not_complete()
        ts.request(100)
        ts.assert_complete().assert_no_errors().assert_no_violations()
        runs.append(ts.values)
    assert runs[0] == runs[1] == [(k, 10) for k in range(10)]


@pytest.mark.parametrize("delay_error", [False, True])
def test_map_raising_for_one_group_of_the_batch(delay_error: bool) -> None:
    """The results of the groups before the failing one go out first, then the error (or, with
    delay_error, the others and then the error): as completing them one by one."""

    def label(k: int, n: int) -> tuple[int, int]:
        if k == 5:
            raise Boom("key 5")
        return (k, n)

    fused, hidden = _both(lambda g, h: _src(g, h).count().map(lambda n: label(g.key, n)))
    runs = []
    for mapper in (fused, hidden):
        with plugins.collect_errors():
            ts = _run(mapper, list(range(120)), 12, max_concurrency=None, delay_error=delay_error)
        ts.assert_error(Boom)
        runs.append(_exact(ts))
    assert runs[0] == runs[1]
    want_first = [(k, 10) for k in range(5)]
    assert runs[0][0][:5] == want_first
    assert len(runs[0][0]) == (11 if delay_error else 5)


def test_map_returning_none_for_one_group_of_the_batch() -> None:
    fused, hidden = _both(lambda g, h: _src(g, h).count().map(lambda n: None if g.key == 3 else n))
    runs = []
    for mapper in (fused, hidden):
        ts = _run(mapper, list(range(60)), 6, max_concurrency=None)
        ts.assert_error(TypeError)
        runs.append(_exact(ts))
    assert runs[0] == runs[1]
    assert runs[0][0] == [10, 10, 10]


def test_cancel_from_on_next_in_the_middle_of_the_batch() -> None:
    """A downstream that cancels after its third value stops the batch there (rule 3.12)."""

    class CancelAfter(TestSubscriber[Any]):
        def on_next(self, item: Any) -> None:
            super().on_next(item)
            if len(self.values) == 3:
                self.cancel()

    fused, hidden = _both(lambda g, h: _src(g, h).count().map(lambda n: (g.key, n)))
    runs = []
    for mapper in (fused, hidden):
        ts = CancelAfter()
        (
            Flowable.range(0, 100)
            .group_by(lambda x: x % 10)
            .flat_map(mapper, max_concurrency=None)
            .subscribe(ts)
        )
        ts.assert_not_complete().assert_no_errors().assert_no_violations()
        runs.append(list(ts.values))
    assert runs[0] == runs[1] == [(0, 10), (1, 10), (2, 10)]


def test_mixed_folded_and_subscribed_groups_keep_their_order() -> None:
    """Even keys fold in place, odd keys are subscribed: the results still come in the order the
    groups opened, as when every group is subscribed."""
    mixed: Mapper = lambda g: (g if g.key % 2 == 0 else g.hide()).count().map(lambda n: (g.key, n))  # noqa: E731
    plain: Mapper = lambda g: g.hide().count().map(lambda n: (g.key, n))  # noqa: E731
    a = _run(mixed, list(range(300)), 25, max_concurrency=None)
    b = _run(plain, list(range(300)), 25, max_concurrency=None)
    a.assert_complete().assert_no_errors()
    assert _exact(a) == _exact(b)
    assert [k for k, _ in a.values] == list(range(25))


def test_folds_in_two_flat_maps_complete_into_their_own() -> None:
    """A group folded by an inner flat_map (not the one that received it) completes into that one."""
    ts = (
        Flowable.range(0, 40)
        .group_by(lambda x: x % 4)
        .flat_map(
            lambda g: Flowable.just(g).flat_map(lambda h: h.count().map(lambda n: (h.key, n))),
            max_concurrency=None,
        )
        .test()
    )
    ts.assert_complete().assert_no_errors().assert_no_violations()
    assert sorted(ts.values) == [(k, 10) for k in range(4)]


def test_cancel_racing_the_batched_completion() -> None:
    """A cancel from another thread while the folds complete: no violation, a prefix of the
    results in order, nothing after the cancel is awaited."""
    want = [(k, 20) for k in range(2_000)]
    for seed in range(20):
        values = _cancel_race(seed)
        assert values == want[: len(values)]


def _cancel_race(seed: int) -> list[Any]:
    import random
    import threading

    rnd = random.Random(seed)
    ts: TestSubscriber[Any] = TestSubscriber()
    go = threading.Event()

    def cancel_later() -> None:
        go.wait(5)
        for _ in range(rnd.randrange(0, 2_000)):
            pass
        ts.cancel()

    t = threading.Thread(target=cancel_later)
    t.start()
    (
        Flowable.range(0, 40_000)
        .do_on_subscribe(lambda _s: go.set())
        .group_by(lambda x: x % 2_000)
        .flat_map(lambda g: g.count().map(lambda n: (g.key, n)), max_concurrency=None)
        .subscribe(ts)
    )
    go.set()
    t.join(5)
    assert not t.is_alive()
    ts.assert_no_errors().assert_no_violations()
    return list(ts.values)


@pytest.mark.parametrize("downstream", ["cancel_in_on_next", "take", "first", "take_while"])
def test_no_map_of_a_later_group_runs_after_the_downstream_cancelled(downstream: str) -> None:
    """The result of each folded group is computed (its map) just before it is emitted into a
    one-by-one downstream: after a cancel, the later groups' maps do not run, and nothing is
    reported, as when the groups complete through their drains."""
    runs = [_map_calls_after_cancel(downstream, hidden) for hidden in (False, True)]
    assert runs[0] == runs[1]
    assert runs[0][1] == [0] and runs[0][2] == []


def _map_calls_after_cancel(downstream: str, hidden: bool) -> tuple[list[Any], list[int], list[str]]:
    class CancelFirst(TestSubscriber[Any]):
        def on_next(self, item: Any) -> None:
            super().on_next(item)
            self.cancel()

    calls: list[int] = []

    def label(n: int, k: int) -> tuple[int, int]:
        calls.append(k)
        if k == 2:
            raise Boom("map failed for key 2")
        return (k, n)

    f = (
        Flowable.range(0, 9)
        .group_by(lambda x: x % 3)
        .flat_map(lambda g: _src(g, hidden).count().map(lambda n, k=g.key: label(n, k)))
    )
    with plugins.collect_errors() as reported:
        if downstream == "cancel_in_on_next":
            ts: TestSubscriber[Any] = CancelFirst()
            f.subscribe(ts)
        elif downstream == "take":
            ts = f.take(1).test()
        elif downstream == "first":
            ts = f.first().test()
        else:
            ts = f.take_while(lambda v: v[0] < 0).test()
    ts.assert_no_violations()
    return (list(ts.values), list(calls), [str(e) for e in reported])


def test_an_upstream_error_does_not_cancel_the_terminated_upstream() -> None:
    """Rule 2.4: after on_error the upstream's subscription counts as cancelled; the folds that end
    with the error do not cancel it again (as with the groups subscribed the usual way)."""
    from rstreams.testing import TestPublisher

    cancelled = []
    for mapper in _both(lambda g, h: _src(g, h).count()):
        tp: TestPublisher[int] = TestPublisher.create()
        ts = Flowable.from_publisher(tp).group_by(lambda x: x % 2).flat_map(mapper).test()
        tp.next(1, 2)
        tp.error(Boom("up"))
        ts.assert_error(Boom).assert_no_violations()
        cancelled.append(tp.was_cancelled)
    assert cancelled == [False, False]
