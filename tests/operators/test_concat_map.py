"""concat_map: scenarios, scalar shortcut, demand across inners, errors, rules, trampolining,
threaded inners and property tests against a plain-Python model."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from operators.harness import Boom, check_raising, check_scenarios
from operators.test_merge_zip import CountingSource, ThreadedRange, run_pattern
from rstreams import Flowable, NoneElementError
from rstreams.testing import TestSubscriber

MAX = 2**63 - 1


# ---------------------------------------------------------------------------------------------
# scenarios


def test_concat_map_just_pairs_scenarios() -> None:
    check_scenarios(lambda f: f.concat_map(lambda x: Flowable.just(x, x)), range(10), lambda d: [y for x in d for y in (x, x)])


def test_concat_map_scalar_scenarios() -> None:
    check_scenarios(lambda f: f.concat_map(lambda x: Flowable.just(x * 2)), range(10), lambda d: [x * 2 for x in d])


def test_concat_map_hidden_inner_scenarios_with_prefetch() -> None:
    check_scenarios(
        lambda f: f.concat_map(lambda x: Flowable.range(x * 10, x % 3).hide(), prefetch=4),
        range(12),
        lambda d: [y for x in d for y in range(x * 10, x * 10 + x % 3)],
    )


def test_concat_map_empty_inners_scenarios() -> None:
    check_scenarios(
        lambda f: f.concat_map(lambda x: Flowable.empty() if x % 2 else Flowable.just(x)),
        range(10),
        lambda d: [x for x in d if x % 2 == 0],
    )


def test_concat_map_raising_mapper() -> None:
    def mapper(x: int) -> Flowable[int]:
        if x == 3:
            raise Boom("mapper")
        return Flowable.just(x)

    src = CountingSource(Flowable.range(0, 10).hide())
    ts = Flowable.from_publisher(src).concat_map(mapper).test()
    ts.assert_failure(Boom, 0, 1, 2).assert_no_violations()
    assert src.cancels == 1  # the upstream was cancelled
    Flowable.range(0, 10).concat_map(mapper).test().assert_failure(Boom, 0, 1, 2).assert_no_violations()
    check_raising(lambda f: f.concat_map(lambda x: (_ for _ in ()).throw(Boom("m"))), range(5))


# ---------------------------------------------------------------------------------------------
# semantics


def test_concat_map_mapper_returning_none_is_type_error() -> None:
    ts = Flowable.range(0, 3).concat_map(lambda x: None).test()  # type: ignore[arg-type,return-value]
    ts.assert_error(NoneElementError, match="concat_map").assert_no_violations()


def test_concat_map_mapper_returning_non_publisher_is_type_error() -> None:
    Flowable.range(0, 3).concat_map(lambda x: [x]).test().assert_error(TypeError).assert_no_violations()  # type: ignore[arg-type,return-value]


def test_concat_map_bad_arguments_raise_at_assembly() -> None:
    with pytest.raises(TypeError):
        Flowable.just(1).concat_map(5)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Flowable.just(1).concat_map(lambda x: Flowable.just(x), prefetch=0)
    with pytest.raises(TypeError):
        Flowable.just(1).concat_map(lambda x: Flowable.just(x), prefetch=True)


def test_concat_map_inner_error_cancels_upstream() -> None:
    src = CountingSource(Flowable.range(0, 10).hide())
    ts = Flowable.from_publisher(src).concat_map(lambda x: Flowable.error(Boom()) if x == 2 else Flowable.just(x)).test()
    ts.assert_failure(Boom, 0, 1).assert_no_violations()
    assert src.cancels == 1


def test_concat_map_upstream_error_cancels_inner() -> None:
    inner = CountingSource(Flowable.never())
    f = Flowable.concat(Flowable.just(1), Flowable.error(Boom())).hide().concat_map(lambda x: inner)
    f.test().assert_failure(Boom).assert_no_violations()
    assert inner.subscriptions == 1 and inner.cancels == 1


def test_concat_map_demand_carries_across_inners() -> None:
    ts = Flowable.range(0, 3).hide().concat_map(lambda x: Flowable.range(x * 10, 3).hide()).test(4)
    ts.assert_values(0, 1, 2, 10).assert_not_complete()
    ts.request(4)
    ts.assert_values(0, 1, 2, 10, 11, 12, 20, 21)
    ts.request(1)
    ts.assert_result(0, 1, 2, 10, 11, 12, 20, 21, 22).assert_no_violations()


def test_concat_map_scalar_waits_for_demand() -> None:
    ts = Flowable.range(0, 3).hide().concat_map(lambda x: Flowable.just(x)).test(0)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(0)
    ts.request(2)
    ts.assert_result(0, 1, 2).assert_no_violations()


def test_concat_map_scalar_shortcut_subscribes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from rstreams.flowable.sources import _basic

    calls: list[int] = []
    orig = _basic.JustFlowable._subscribe_actual

    def spy(self: Any, s: Any) -> None:
        calls.append(1)
        orig(self, s)

    monkeypatch.setattr(_basic.JustFlowable, "_subscribe_actual", spy)
    Flowable.range(0, 5).hide().concat_map(lambda x: Flowable.just(x)).test().assert_result(0, 1, 2, 3, 4)
    Flowable.range(0, 5).hide().concat_map(lambda x: Flowable.just(x)).test(1).request(10).assert_result(0, 1, 2, 3, 4)
    Flowable.range(0, 5).hide().concat_map(lambda x: Flowable.empty()).test().assert_result()
    assert calls == []


def test_concat_map_prefetch_and_replenish() -> None:
    requests: list[int] = []
    src = Flowable.range(0, 20).hide().do_on_request(requests.append) if hasattr(Flowable, "do_on_request") else None
    if src is None:
        pytest.skip("do_on_request not available")
    ts = src.concat_map(lambda x: Flowable.just(x).hide(), prefetch=8).test(0)
    assert requests == [8]
    ts.request(6)
    assert requests == [8, 6]  # limit = 8 - 8 // 4 = 6
    ts.request(MAX)
    ts.assert_value_count(20).assert_complete().assert_no_violations()


def test_concat_map_cancel_stops_everything() -> None:
    inner = CountingSource(Flowable.range(100, 10).hide())
    src = CountingSource(Flowable.range(0, 10).hide())
    ts = Flowable.from_publisher(src).concat_map(lambda x: inner).test(3)
    ts.assert_values(100, 101, 102)
    ts.cancel()
    ts.request(10)
    ts.assert_values(100, 101, 102).assert_not_complete().assert_no_violations()
    assert src.cancels == 1 and inner.cancels == 1


# ---------------------------------------------------------------------------------------------
# trampolining


def test_concat_map_many_synchronous_inners_do_not_recurse() -> None:
    n = 50_000
    Flowable.range(0, n).concat_map(lambda x: Flowable.just(x).hide()).to_list().test().assert_result(list(range(n)))
    empty = Flowable.empty().hide()
    Flowable.range(0, n).concat_map(lambda x: empty).test().assert_result().assert_no_violations()


def test_concat_map_many_scalar_inners_with_bounded_demand() -> None:
    n = 20_000
    ts = Flowable.range(0, n).concat_map(lambda x: Flowable.just(x)).test(n - 1)
    ts.assert_value_count(n - 1).assert_not_complete()
    ts.request(1)
    ts.assert_value_count(n).assert_complete().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# threads


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_concat_map_threaded_inners_keep_order(seed: int) -> None:
    f = Flowable.range(0, 20).concat_map(lambda i: ThreadedRange(i * 100, 15, seed=seed * 100 + i))
    ts = f.test()
    ts.await_done(10).assert_complete().assert_no_violations()
    assert ts.values == [x for i in range(20) for x in range(i * 100, i * 100 + 15)]


@pytest.mark.parametrize("seed", [4, 5])
def test_concat_map_threaded_inners_racing_requests(seed: int) -> None:
    rnd = random.Random(seed)
    f = Flowable.range(0, 15).hide().concat_map(lambda i: ThreadedRange(i * 100, i % 5, seed=seed + i), prefetch=3)
    ts: TestSubscriber[int] = TestSubscriber(0)
    f.subscribe(ts)
    deadline = time.monotonic() + 10
    while not ts.is_terminated and time.monotonic() < deadline:
        ts.request(rnd.randint(1, 3))
        time.sleep(rnd.random() * 0.001)
    ts.assert_complete().assert_no_violations()
    assert ts.values == [x for i in range(15) for x in range(i * 100, i * 100 + i % 5)]


def test_concat_map_threaded_inner_error_races_upstream(undeliverable: list[BaseException]) -> None:
    f = Flowable.range(0, 5).concat_map(lambda i: ThreadedRange(i * 10, 5, fail=Boom("inner") if i == 2 else None))
    ts = f.test()
    ts.await_done(10).assert_error(Boom).assert_no_violations()
    assert ts.values == list(range(0, 5)) + list(range(10, 15)) + list(range(20, 25))


# ---------------------------------------------------------------------------------------------
# properties


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(0, 4), max_size=15),
    st.lists(st.integers(1, 5), max_size=10),
    st.booleans(),
    st.sampled_from([1, 2, 5]),
)
def test_property_concat_map_equals_nested_comprehension(
    data: list[int], pattern: list[int], hidden: bool, prefetch: int
) -> None:
    def mapper(x: int) -> Flowable[int]:
        if x == 0:
            return Flowable.empty()
        if x == 1:
            return Flowable.just(100)
        f = Flowable.range(x * 10, x)
        return f.hide() if x % 2 else f

    def model(x: int) -> list[int]:
        return [] if x == 0 else [100] if x == 1 else list(range(x * 10, x * 11))

    src = Flowable.from_iterable(data)
    if hidden:
        src = src.hide()
    ts = run_pattern(src.concat_map(mapper, prefetch=prefetch), pattern)
    assert ts.values == [y for x in data for y in model(x)]
    ts.assert_complete().assert_no_violations()


def test_concat_map_upstream_over_delivering_is_missing_backpressure() -> None:
    from operators.test_merge_zip import OverEmitter
    from rstreams import MissingBackpressureError

    bad = OverEmitter(10)
    ts = Flowable.from_publisher(bad).concat_map(lambda x: Flowable.never(), prefetch=2).test(0)
    ts.assert_error(MissingBackpressureError).assert_no_violations()
    assert bad.cancelled


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_concat_map_upstream_error_on_its_thread_races_inner_on_another(seed: int) -> None:
    # race: inner on_next (inner thread) vs upstream on_error (upstream thread): half-serialized
    rnd = random.Random(seed)
    up = ThreadedRange(0, rnd.randint(1, 4), seed=seed, fail=Boom("up"), jitter=0.3)
    f = Flowable.from_publisher(up).concat_map(lambda i: ThreadedRange(i * 100, 40, seed=seed + i, jitter=0.1))
    ts = f.test()
    ts.await_done(10).assert_error(Boom).assert_not_complete().assert_no_violations()
    model = [x for i in range(up.count) for x in range(i * 100, i * 100 + 40)]
    assert ts.values == model[: len(ts.values)]


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_concat_map_mixed_inners_from_threaded_upstream(seed: int) -> None:
    # scalar runs (one half-serializer hold per run), empty, synchronous and threaded inners,
    # with an upstream that emits (and, for odd seeds, fails) on its own thread
    rnd = random.Random(seed)
    n = rnd.randint(50, 200)
    up = ThreadedRange(0, n, seed=seed, fail=Boom("up") if seed % 2 else None, jitter=0.05)

    def mapper(i: int) -> Any:
        r = i % 5
        if r == 0:
            return Flowable.empty()
        if r < 3:
            return Flowable.just(i)
        if r == 3:
            return Flowable.range(i, 2).hide()
        return ThreadedRange(i, 2, seed=i, jitter=0)

    want = [x for i in range(n) for x in ([] if i % 5 == 0 else [i] if i % 5 < 3 else [i, i + 1])]
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_publisher(up).concat_map(mapper, prefetch=rnd.choice([1, 2, 8])).subscribe(ts)
    deadline = time.monotonic() + 10
    while not ts.is_terminated and time.monotonic() < deadline:
        ts.request(rnd.randint(1, 5) if seed % 4 else MAX)
        time.sleep(0.0002)
    ts.assert_terminated().assert_no_violations()
    if seed % 2:
        ts.assert_error(Boom)
        assert ts.values == want[: len(ts.values)]
    else:
        assert ts.values == want
        ts.assert_complete()
