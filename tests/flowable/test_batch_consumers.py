"""Terminal consumers and bridges take the batch a boundary hands on (``on_next_batch``) in one step,
with the signals of the one-by-one path: the same results, the same user-function calls, an error
named by the element that raised it, a ``None`` element still a rule 2.13 error, a cancel that stops
at its element, and rule 1.1 accounting.

Each scenario runs twice over the same boundary: batched (the consumer right after ``observe_on``)
and one by one (``do_on_next`` in between takes no batches, so the drain calls ``on_next`` per
element)."""

from __future__ import annotations

import asyncio
import operator
import threading
from collections.abc import Callable
from typing import Any

import pytest

from operators.harness import Boom
from rstreams import Flowable, schedulers
from rstreams.flowable import _parallel
from rstreams.flowable.operators import _aggregate, _blocking
from rstreams.testing import TestSubscriber

N = 3000


def _noop(_: object) -> None:
    pass


def _boundary(batched: bool, src: Flowable[Any] | None = None) -> Flowable[Any]:
    f = (src if src is not None else Flowable.range(0, N)).subscribe_on(schedulers.single()).observe_on(schedulers.new_thread())
    return f if batched else f.do_on_next(_noop)


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Sizes of the batches the aggregates and the bridges took in one step."""
    seen: list[int] = []

    def spy(cls: Any) -> None:
        orig = cls.on_next_batch

        def on_next_batch(self: Any, items: list[Any]) -> None:
            seen.append(len(items))
            orig(self, items)

        monkeypatch.setattr(cls, "on_next_batch", on_next_batch)

    spy(_aggregate._AggregateSubscriber)
    spy(_blocking._QueueSubscriber)
    spy(_blocking._EventSubscriber)
    spy(_blocking._FutureSubscriber)
    return seen


def _run(f: Flowable[Any]) -> tuple[list[Any], str | None]:
    ts: TestSubscriber[Any] = f.test()
    ts.await_done(10)
    ts.assert_no_violations()
    err = ts.errors[0] if ts.errors else None
    return ts.values, None if err is None else f"{type(err).__name__}: {err}"


_AGGREGATES: dict[str, Callable[[Flowable[Any], list[Any]], Flowable[Any]]] = {
    "reduce(add)": lambda f, calls: f.reduce(operator.add),
    "reduce(lambda)": lambda f, calls: f.reduce(lambda a, b: calls.append(b) or a + b),
    "reduce(seed)": lambda f, calls: f.reduce(lambda a, b: calls.append(b) or a + b, 10),
    "collect": lambda f, calls: f.collect(list, lambda c, x: calls.append(x) or c.append(x)),
    "to_list": lambda f, calls: f.to_list(),
    "to_dict": lambda f, calls: f.to_dict(lambda x: calls.append(x) or x % 100),
    "to_dict(value)": lambda f, calls: f.to_dict(lambda x: x % 7, lambda x: calls.append(x) or -x),
    "count": lambda f, calls: f.count(),
    "all": lambda f, calls: f.all(lambda x: calls.append(x) or x < 2500),
    "any": lambda f, calls: f.any(lambda x: calls.append(x) or x == 2200),
    "contains": lambda f, calls: f.contains(1777),
}


@pytest.mark.parametrize("name", list(_AGGREGATES))
def test_aggregates_take_a_boundary_batch_in_one_step_with_the_one_by_one_signals(name: str, batches: list[int]) -> None:
    make = _AGGREGATES[name]
    calls_b: list[Any] = []
    calls_e: list[Any] = []
    batched = _run(make(_boundary(True), calls_b))
    assert batches, "the aggregate took no batch"
    batches.clear()
    one_by_one = _run(make(_boundary(False), calls_e))
    assert not batches
    assert batched == one_by_one
    assert calls_b == calls_e


@pytest.mark.parametrize("name", ["reduce(lambda)", "collect", "to_dict", "to_dict(value)", "all", "any"])
def test_a_user_function_failing_mid_batch_is_that_elements_error_and_stops_there(name: str) -> None:
    make = _AGGREGATES[name]
    # the user functions append to `calls`: this list raises when 1234 is appended

    class Raising(list[Any]):
        def append(self, x: Any) -> None:
            super().append(x)
            if x == 1234:
                raise Boom(f"element {x}")

    outs = []
    for batched in (True, False):
        calls = Raising()
        outs.append((_run(make(_boundary(batched), calls)), list(calls)))
    assert outs[0] == outs[1]
    (values, err), calls = outs[0]
    if name in ("all", "any") and calls[-1] != 1234:
        return  # decided before the raising element (any: 2200 > 1234 is never reached first)
    assert values == [] and err == "Boom: element 1234" and calls[-1] == 1234


def test_reduce_returning_none_mid_batch_is_a_rule_2_13_error_at_that_element() -> None:
    def run(batched: bool) -> tuple[tuple[list[Any], str | None], list[int]]:
        calls: list[int] = []
        return _run(_boundary(batched).reduce(lambda a, b: calls.append(b) or (None if b == 999 else a + b))), calls

    outs = [run(True), run(False)]
    assert outs[0] == outs[1]
    (values, err), calls = outs[0]
    assert values == [] and err is not None and err.startswith("NoneElementError") and calls[-1] == 999


@pytest.mark.parametrize("terminal", ["to_list", "count", "reduce", "blocking_last", "blocking_for_each", "async"])
def test_a_none_element_through_a_boundary_is_a_rule_2_13_error(terminal: str) -> None:
    for batched in (True, False):
        src = Flowable.from_iterable(range(N)).map(lambda x: None if x == 2000 else x)
        f = _boundary(batched, src)
        if terminal == "to_list":
            _, err = _run(f.to_list())
        elif terminal == "count":
            _, err = _run(f.count())
        elif terminal == "reduce":
            _, err = _run(f.reduce(operator.add))
        else:
            with pytest.raises(TypeError, match="map"):
                if terminal == "blocking_last":
                    f.blocking_last(timeout=10)
                elif terminal == "blocking_for_each":
                    f.blocking_for_each(_noop)
                else:
                    asyncio.run(_consume(f))
            continue
        assert err is not None and err.startswith("NoneElementError") and "map" in err


async def _consume(f: Flowable[Any]) -> None:
    async for _ in f:
        pass


def test_a_cancel_while_a_batch_is_folded_stops_the_user_calls_at_the_next_element() -> None:
    def run(batched: bool) -> list[int]:
        ts: TestSubscriber[Any] = TestSubscriber()
        calls: list[int] = []

        def fn(a: int, b: int) -> int:
            calls.append(b)
            if b == 500:
                ts.cancel()  # the fold is in the middle of a batch here
            return a + b

        _boundary(batched).reduce(fn).subscribe(ts)
        for _ in range(500):
            if len(calls) >= 500:
                break
            threading.Event().wait(0.01)
        threading.Event().wait(0.1)  # room for calls after the cancel, were there any
        ts.assert_no_values().assert_not_complete().assert_no_violations()
        return list(calls)

    assert run(True) == run(False) == list(range(1, 501))


def test_blocking_bridges_give_the_one_by_one_results(batches: list[int]) -> None:
    for batched in (True, False):
        batches.clear()
        assert _boundary(batched).blocking_first(timeout=10) == 0
        assert _boundary(batched).blocking_last(timeout=10) == N - 1
        assert _boundary(batched).to_future().result(10) == N - 1
        assert list(_boundary(batched).blocking_iterable()) == list(range(N))
        out: list[int] = []
        _boundary(batched).blocking_for_each(out.append)
        assert out == list(range(N))
        out2: list[int] = []
        done = threading.Event()
        _boundary(batched).blocking_subscribe(out2.append, None, done.set)
        assert out2 == list(range(N)) and done.is_set()
        assert bool(batches) == batched


@pytest.mark.parametrize("prefetch", [1, 5, 16, 128])
def test_blocking_for_each_keeps_at_most_prefetch_in_flight(prefetch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    peak = [0]
    orig = _blocking._QueueSubscriber.on_next_batch

    def on_next_batch(self: Any, items: list[Any]) -> None:
        orig(self, items)
        peak[0] = max(peak[0], len(self._queue))

    monkeypatch.setattr(_blocking._QueueSubscriber, "on_next_batch", on_next_batch)
    out: list[int] = []
    _boundary(True).blocking_for_each(out.append, prefetch=prefetch)  # an overflow would raise (rule 1.1)
    assert out == list(range(N)) and 0 < peak[0] <= prefetch


@pytest.mark.parametrize("batched", [True, False])
def test_blocking_for_each_failing_mid_batch_cancels_and_raises_that_error(batched: bool) -> None:
    cancelled = threading.Event()
    calls: list[int] = []

    def fn(x: int) -> None:
        calls.append(x)
        if x == 700:
            raise Boom("700")

    src = Flowable.range(0, N).do_on_cancel(cancelled.set)
    with pytest.raises(Boom, match="700"):
        _boundary(batched, src).blocking_for_each(fn)
    assert calls == list(range(701)) and cancelled.wait(5)


@pytest.mark.parametrize("batched", [True, False])
def test_blocking_subscribe_on_next_failing_mid_batch_goes_to_on_error_after_a_cancel(batched: bool) -> None:
    cancelled = threading.Event()
    calls: list[int] = []
    errors: list[BaseException] = []

    def fn(x: int) -> None:
        calls.append(x)
        if x == 333:
            raise Boom("333")

    src = Flowable.range(0, N).do_on_cancel(cancelled.set)
    _boundary(batched, src).blocking_subscribe(fn, errors.append, lambda: errors.append(AssertionError("completed")))
    assert calls == list(range(334)) and [str(e) for e in errors] == ["333"] and cancelled.wait(5)


def test_blocking_for_each_closed_from_another_thread_stops_at_the_next_element() -> None:
    it = _boundary(True, Flowable.range(0, 10**9)).blocking_iterable(prefetch=64)
    calls: list[int] = []

    def fn(x: int) -> None:
        calls.append(x)
        if x == 100:
            t = threading.Thread(target=it.close)
            t.start()
            t.join()

    it.for_each(fn)
    assert calls == list(range(101))


@pytest.mark.parametrize("batched", [True, False])
def test_async_for_and_await_over_a_boundary(batched: bool) -> None:
    cancelled = threading.Event()

    async def main() -> tuple[list[int], int, list[int]]:
        seen = [x async for x in _boundary(batched)]
        last = await _boundary(batched)
        head: list[int] = []
        async for x in _boundary(batched, Flowable.range(0, 10**9).do_on_cancel(cancelled.set)):
            head.append(x)
            if x == 300:
                break
        return seen, last, head

    seen, last, head = asyncio.run(main())
    assert seen == list(range(N)) and last == N - 1 and head == list(range(301)) and cancelled.wait(5)


# -- flat_map inners behind a boundary -------------------------------------------------------------


def _inners(batched: bool, fail_at: int | None = None) -> Flowable[int]:
    def inner(lo: int) -> Flowable[int]:
        f = Flowable.range(lo, 500)
        if fail_at is not None:
            f = f.map(lambda x: _fail_at(x, fail_at))
        f = f.subscribe_on(schedulers.computation())
        return f if batched else f.do_on_next(_noop)  # do_on_next: the inner emits one by one

    return Flowable.range(0, 8).map(lambda i: i * 500).flat_map(inner)


def _fail_at(x: int, at: int) -> int:
    if x == at:
        raise Boom(f"element {x}")
    return x


def _in_inner_order(values: list[int]) -> bool:
    last: dict[int, int] = {}
    for v in values:
        k = v // 500
        if last.get(k, v - 1) != v - 1:
            return False
        last[k] = v
    return True


@pytest.mark.parametrize("prefetch", [None, 1, 7, 128])
def test_flat_map_inners_on_threads_hand_runs_on_with_the_one_by_one_signals(prefetch: int | None, batches: list[int]) -> None:
    outs = []
    for batched in (True, False):
        batches.clear()
        f = _inners(batched)
        if prefetch is not None:  # bounded demand into the drain (observe_on takes batches)
            f = f.observe_on(schedulers.single(), prefetch=prefetch)
        values, err = _run(f)
        assert err is None and _in_inner_order(values)
        outs.append(sorted(values))
        assert _run(_inners(batched).reduce(operator.add)) == ([sum(range(4000))], None)
        if batched:  # (one-by-one inners may still queue up behind a busy drain, which then hands a run)
            assert batches
    assert outs[0] == outs[1] == list(range(4000))


@pytest.mark.parametrize("batched", [True, False])
def test_flat_map_inner_failing_behind_a_boundary_ends_with_that_error(batched: bool) -> None:
    values, err = _run(_inners(batched, fail_at=1700).to_list())
    assert values == [] and err == "Boom: element 1700"
    values, err = _run(_inners(batched, fail_at=1700))
    assert err == "Boom: element 1700" and _in_inner_order(values) and 1700 not in values


def test_flat_map_inners_into_a_foreign_subscriber_cancelling_mid_batch_get_nothing_more() -> None:
    class Cancels:
        def __init__(self) -> None:
            self.values: list[int] = []
            self.s: Any = None
            self.done = threading.Event()

        def on_subscribe(self, s: Any) -> None:
            self.s = s
            s.request(2**63 - 1)

        def on_next(self, x: int) -> None:
            self.values.append(x)
            if len(self.values) == 3:
                self.s.cancel()
                self.done.set()

        def on_error(self, e: BaseException) -> None:
            raise AssertionError(e)

        def on_complete(self) -> None:
            raise AssertionError("completed after cancel")

    c = Cancels()
    _inners(True).subscribe(c)
    assert c.done.wait(10)
    threading.Event().wait(0.1)
    assert len(c.values) == 3


# -- parallel(): the dispatcher deals runs to rails that take batches ------------------------------


def _tagged_rails(
    n: int, batched: bool, fn: Callable[[int], int] = lambda x: x, rails: int = 2, prefetch: int = 128
) -> Flowable[tuple[int, int]]:
    tags = iter(range(100))

    def tag(f: Flowable[int]) -> Flowable[tuple[int, int]]:
        k = next(tags)
        return f.map(lambda x: (k, fn(x)))

    p = Flowable.range(0, n).parallel(rails)
    if not batched:
        p = p.do_on_next(_noop)  # the dispatcher then deals element by element
    return p.run_on(schedulers.computation(), prefetch=prefetch).compose(tag).sequential()


def test_parallel_deals_the_same_elements_to_the_same_rails_batched_or_not(monkeypatch: pytest.MonkeyPatch) -> None:
    # 250 elements: each rail's demand (run_on's prefetch of 128) never runs out, so the
    # round-robin assignment is deterministic on both paths
    dealt: list[bool] = []
    orig = _parallel._Dispatcher._deal_runs

    def deal_runs(self: Any, *args: Any) -> bool:
        r = orig(self, *args)
        dealt.append(r)
        return r

    monkeypatch.setattr(_parallel._Dispatcher, "_deal_runs", deal_runs)
    per_rail = []
    for batched in (True, False):
        dealt.clear()
        values, err = _run(_tagged_rails(250, batched))
        assert err is None
        per_rail.append([[x for k, x in values if k == r] for r in (0, 1)])
        assert _run(_tagged_rails(250, batched).map(lambda kx: kx[1]).reduce(operator.add)) == ([sum(range(250))], None)
        assert any(dealt) == batched
    assert per_rail[0] == per_rail[1] == [list(range(0, 250, 2)), list(range(1, 250, 2))]


@pytest.mark.parametrize("rails, prefetch", [(2, 128), (3, 2), (3, 7)])
@pytest.mark.parametrize("batched", [True, False])
def test_parallel_rails_lose_nothing_and_keep_their_order(batched: bool, rails: int, prefetch: int) -> None:
    # a small run_on prefetch makes rails run out of demand mid-pass (the dealing loop's path)
    values, err = _run(_tagged_rails(20_000, batched, rails=rails, prefetch=prefetch))
    assert err is None
    assert sorted(x for _, x in values) == list(range(20_000))
    for r in range(rails):
        rail = [x for k, x in values if k == r]
        assert rail == sorted(rail)


@pytest.mark.parametrize("batched", [True, False])
def test_parallel_rail_failing_mid_batch_ends_with_that_error(batched: bool) -> None:
    values, err = _run(_tagged_rails(5000, batched, lambda x: _fail_at(x, 3001)))
    assert err == "Boom: element 3001" and 3001 not in [x for _, x in values]


def _deal_one_by_one(demand: list[int], items: list[int], start: int) -> tuple[list[list[int]], int, int]:
    """The one-by-one dealing loop of the dispatcher, as a reference."""
    n = len(demand)
    left = list(demand)
    runs: list[list[int]] = [[] for _ in range(n)]
    q = list(items)
    i, idle = start, 0
    while q and idle < n:
        if left[i] > 0:
            runs[i].append(q.pop(0))
            left[i] -= 1
            idle = 0
        else:
            idle += 1
        i = (i + 1) % n
    return runs, i, len(items) - len(q)


class _RailSink:
    def __init__(self) -> None:
        self.got: list[int] = []

    def on_next_batch(self, items: list[int]) -> None:
        self.got.extend(items)


@pytest.mark.parametrize("seed", range(300))
def test_parallel_dealing_in_slices_is_the_one_by_one_round_robin(seed: int) -> None:
    import random
    from collections import deque

    rnd = random.Random(seed)
    n = rnd.randint(1, 4)
    demand = [rnd.choice([0, 0, 1, 2, 3, 5, 8, 40]) for _ in range(n)]
    items = list(range(rnd.randint(0, 40)))
    start = rnd.randrange(n)
    d = _parallel._Dispatcher(Flowable.empty(), n, 128)
    sinks = [_RailSink() for _ in range(n)]
    rails = []
    for k in range(n):
        rail = _parallel._Rail(d, k, sinks[k])  # type: ignore[arg-type]
        rail.requested.set(demand[k])
        rails.append(rail)
    d._rails = rails  # type: ignore[assignment]
    d._next = start
    q: deque[int] = deque(items)
    assert d._deal_runs(rails, q, n)  # type: ignore[arg-type]
    runs, nxt, dealt = _deal_one_by_one(demand, items, start)
    assert [s.got for s in sinks] == runs
    assert d._next == nxt and list(q) == items[dealt:]
    assert [r.requested.get() for r in rails] == [dm - len(run) for dm, run in zip(demand, runs, strict=True)]
