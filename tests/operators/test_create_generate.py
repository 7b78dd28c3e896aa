"""Flowable.create (push bridge with backpressure strategies) and Flowable.generate (pull source)."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import BackpressureStrategy, Flowable, MissingBackpressureError, ProtocolViolationError
from rstreams.testing import TestSubscriber

B = BackpressureStrategy


def pusher(items: list[Any], complete: bool = True) -> Any:
    def push(emitter: Any) -> None:
        for x in items:
            emitter.on_next(x)
        if complete:
            emitter.on_complete()

    return push


# ---------------------------------------------------------------------------------------------
# create: strategies with a synchronous producer


@pytest.mark.parametrize("strategy", list(B))
def test_create_unbounded_demand_emits_everything(strategy: BackpressureStrategy) -> None:
    Flowable.create(pusher([1, 2, 3]), strategy).test().assert_result(1, 2, 3).assert_no_violations()


def test_create_buffer_holds_items_until_requested() -> None:
    ts = Flowable.create(pusher(list(range(10))), B.BUFFER).test(3)
    ts.assert_values(0, 1, 2).assert_not_complete()
    ts.request(5).assert_values(*range(8)).assert_not_complete()
    ts.request(2).assert_result(*range(10)).assert_no_violations()


def test_create_buffer_error_waits_behind_buffered_items() -> None:
    def push(e: Any) -> None:
        e.on_next(1)
        e.on_next(2)
        e.on_error(KeyError("x"))

    ts = Flowable.create(push, B.BUFFER).test(1)
    ts.assert_values(1).assert_no_errors()
    ts.request(1).assert_values(1, 2).assert_error(KeyError).assert_no_violations()


def test_create_drop_drops_items_without_demand() -> None:
    ts = Flowable.create(pusher(list(range(10))), B.DROP).test(3)
    ts.assert_result(0, 1, 2).assert_no_violations()


def test_create_latest_keeps_the_latest_item() -> None:
    ts = Flowable.create(pusher(list(range(10))), B.LATEST).test(3)
    ts.assert_values(0, 1, 2).assert_not_complete()
    ts.request(5).assert_result(0, 1, 2, 9).assert_no_violations()


def test_create_error_strategy_signals_missing_backpressure_naming_the_fix() -> None:
    ts = Flowable.create(pusher(list(range(10))), B.ERROR).test(2)
    ts.assert_values(0, 1).assert_error(MissingBackpressureError)
    msg = str(ts.errors[0])
    assert "create" in msg and "on_backpressure_buffer" in msg and "LATEST" in msg
    ts.assert_no_violations()


def test_create_error_strategy_runs_cancellable() -> None:
    cancelled: list[int] = []

    def push(e: Any) -> None:
        e.set_cancellable(lambda: cancelled.append(1))
        for i in range(5):
            e.on_next(i)

    Flowable.create(push, B.ERROR).test(1).assert_error(MissingBackpressureError).assert_no_violations()
    assert cancelled == [1]


def test_create_missing_pushes_regardless_of_demand() -> None:
    ts = Flowable.create(pusher([1, 2, 3]), B.MISSING).test(1)
    assert ts.values == [1, 2, 3]  # over-delivery is the point of MISSING: the downstream must cope
    ts2 = Flowable.create(pusher(list(range(10))), B.MISSING).on_backpressure_buffer().test(2)
    ts2.assert_values(0, 1).request(100).assert_result(*range(10)).assert_no_violations()


@pytest.mark.parametrize("strategy", [B.BUFFER, B.DROP, B.LATEST, B.ERROR])
def test_create_slow_subscriber_one_at_a_time(strategy: BackpressureStrategy) -> None:
    """A producer that pushes only as much as requested, asked one at a time: nothing is lost."""

    def push(e: Any) -> None:
        i = 0
        # emit while there is demand, as a well-behaved push API would
        while i < 20 and not e.is_cancelled:
            if e.requested > 0:
                e.on_next(i)
                i += 1
            else:
                break
        state["i"] = i
        state["e"] = e

    state: dict[str, Any] = {}
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.create(push, strategy).subscribe(ts)
    e = state["e"]
    for _ in range(20):
        ts.request(1)
        i = state["i"]
        if i < 20 and e.requested > 0:
            e.on_next(i)
            state["i"] = i + 1
    e.on_complete()
    ts.assert_result(*range(20)).assert_no_violations()


def test_create_slow_consumer_buffer_from_thread() -> None:
    """The producer runs ahead on its own thread; the consumer requests one at a time."""

    def push(e: Any) -> None:
        def run() -> None:
            for i in range(500):
                e.on_next(i)
            e.on_complete()

        threading.Thread(target=run, daemon=True).start()

    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.create(push, B.BUFFER).subscribe(ts)
    for k in range(1, 501):
        ts.request(1)
        ts.await_count(k, 5)
    ts.await_done(5).assert_result(*range(500)).assert_no_violations()


@pytest.mark.parametrize("strategy", [B.DROP, B.LATEST])
def test_create_slow_consumer_lossy_strategies_from_thread(strategy: BackpressureStrategy) -> None:
    done = threading.Event()

    def push(e: Any) -> None:
        def run() -> None:
            for i in range(2000):
                e.on_next(i)
            e.on_complete()
            done.set()

        threading.Thread(target=run, daemon=True).start()

    ts: TestSubscriber[int] = TestSubscriber(1)
    Flowable.create(push, strategy).subscribe(ts)
    assert done.wait(5)
    for _ in range(3):
        ts.request(1)
    ts.await_done(5).assert_complete().assert_no_violations()
    assert ts.values == sorted(set(ts.values)), "order kept, no duplicates"
    assert 1 <= len(ts.values) <= 4
    if strategy is B.LATEST:
        assert ts.values[-1] == 1999


def test_create_error_strategy_slow_consumer_from_thread() -> None:
    def push(e: Any) -> None:
        def run() -> None:
            for i in range(1000):
                e.on_next(i)
            e.on_complete()

        threading.Thread(target=run, daemon=True).start()

    ts: TestSubscriber[int] = TestSubscriber(1)
    Flowable.create(push, B.ERROR).subscribe(ts)
    ts.await_done(5).assert_error(MissingBackpressureError).assert_no_violations()
    assert ts.values == list(range(len(ts.values))) and len(ts.values) <= 1


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("producers", [2, 4])
def test_create_buffer_concurrent_producers_lose_and_duplicate_nothing(seed: int, producers: int) -> None:
    rnd = random.Random(seed)
    per = 2000
    barrier = threading.Barrier(producers)
    finished = threading.Barrier(producers + 1)

    def push(e: Any) -> None:
        def run(p: int) -> None:
            barrier.wait(5)
            for i in range(per):
                e.on_next((p, i))
            finished.wait(5)

        for p in range(producers):
            threading.Thread(target=run, args=(p,), daemon=True).start()

    ts: TestSubscriber[tuple[int, int]] = TestSubscriber(0)
    Flowable.create(push, B.BUFFER).subscribe(ts)
    # the consumer requests random amounts from the test thread while the producers race
    total = producers * per
    asked = 0
    while asked < total:
        n = rnd.randint(1, 300)
        ts.request(n)
        asked += n
    finished.wait(5)
    ts.await_count(total, 10)
    vals = ts.values
    assert len(vals) == total and len(set(vals)) == total
    for p in range(producers):
        assert [i for (q, i) in vals if q == p] == list(range(per)), "per-producer order kept"
    ts.assert_no_violations()


@pytest.mark.parametrize("strategy", [B.DROP, B.LATEST, B.MISSING])
def test_create_lossy_concurrent_producers_never_duplicate(strategy: BackpressureStrategy) -> None:
    """3 producer threads, a consumer requesting small random amounts: per-producer order kept, no
    duplicates, never more than requested (except MISSING, which ignores demand by definition)."""
    rnd = random.Random(11)
    producers, per = 3, 1500
    barrier = threading.Barrier(producers)
    finished = threading.Barrier(producers + 1)

    def push(e: Any) -> None:
        def run(p: int) -> None:
            barrier.wait(5)
            for i in range(per):
                e.on_next((p, i))
            finished.wait(5)

        for p in range(producers):
            threading.Thread(target=run, args=(p,), daemon=True).start()

    ts: TestSubscriber[tuple[int, int]] = TestSubscriber(0)
    Flowable.create(push, strategy).subscribe(ts)
    for _ in range(100):
        ts.request(rnd.randint(1, 5))
    finished.wait(5)
    vals = ts.values
    assert len(set(vals)) == len(vals)
    for p in range(producers):
        mine = [i for (q, i) in vals if q == p]
        assert mine == sorted(mine)
    if strategy is B.MISSING:
        assert len(vals) == producers * per
    else:
        ts.assert_no_violations()


def test_create_concurrent_producers_and_terminal() -> None:
    """Two producers race with on_complete from a third thread: exactly one terminal, no overlap."""
    for seed in range(5):
        rnd = random.Random(seed)
        start = threading.Barrier(3)

        def push(e: Any) -> None:
            def run() -> None:
                start.wait(5)  # noqa: B023
                for i in range(rnd.randint(100, 500)):  # noqa: B023
                    e.on_next(i)

            def end() -> None:
                start.wait(5)  # noqa: B023
                e.on_complete()

            for t in (run, run, end):
                threading.Thread(target=t, daemon=True).start()

        ts = Flowable.create(push, B.BUFFER).test()
        ts.await_done(5).assert_complete().assert_no_errors().assert_no_violations()


def test_create_on_next_none_is_type_error() -> None:
    Flowable.create(pusher([1, None, 2]), B.BUFFER).test().assert_values(1).assert_error(
        TypeError
    ).assert_no_violations()


def test_create_emitting_after_cancel_is_ignored_and_cancellable_runs(
    undeliverable: list[BaseException],
) -> None:
    box: dict[str, Any] = {}
    calls: list[str] = []

    def push(e: Any) -> None:
        box["e"] = e
        e.set_cancellable(lambda: calls.append("cancel"))

    ts = Flowable.create(push, B.BUFFER).test()
    e = box["e"]
    e.on_next(1)
    ts.cancel()
    assert e.is_cancelled
    e.on_next(2)
    e.on_complete()
    ts.assert_values(1).assert_not_complete().assert_no_violations()
    assert calls == ["cancel"]
    assert not undeliverable
    e.on_error(ValueError("late"))  # after cancel: to the hook, never silently
    assert len(undeliverable) == 1 and isinstance(undeliverable[0], ValueError)


def test_create_on_error_after_termination_goes_to_hook(undeliverable: list[BaseException]) -> None:
    box: dict[str, Any] = {}

    def push(e: Any) -> None:
        box["e"] = e
        e.on_complete()

    Flowable.create(push, B.BUFFER).test().assert_result().assert_no_violations()
    assert box["e"].try_on_error(KeyError("k")) is False
    box["e"].on_error(KeyError("k"))
    assert [type(x) for x in undeliverable] == [KeyError]


def test_create_set_cancellable_replaces_and_runs_on_completion() -> None:
    calls: list[str] = []

    def push(e: Any) -> None:
        e.set_cancellable(lambda: calls.append("a"))
        e.set_cancellable(lambda: calls.append("b"))  # the previous one runs now (replaced)
        e.on_next(1)
        e.on_complete()
        e.set_cancellable(lambda: calls.append("c"))  # terminated: runs at once

    Flowable.create(push, B.BUFFER).test().assert_result(1).assert_no_violations()
    assert calls == ["a", "b", "c"]


def test_create_requested_reflects_outstanding_demand() -> None:
    seen: list[int] = []

    def push(e: Any) -> None:
        seen.append(e.requested)
        e.on_next(1)
        seen.append(e.requested)

    Flowable.create(push, B.BUFFER).test(5)
    assert seen == [5, 4]
    seen.clear()
    Flowable.create(push, B.BUFFER).test()
    assert seen == [2**63 - 1, 2**63 - 1]


def test_create_raising_emitter_fn_signals_error() -> None:
    def push(e: Any) -> None:
        e.on_next(1)
        raise RuntimeError("boom")

    Flowable.create(push, B.BUFFER).test().assert_values(1).assert_error(RuntimeError).assert_no_violations()


def test_create_serialize_returns_a_usable_emitter() -> None:
    def push(e: Any) -> None:
        s = e.serialize()
        s.on_next(1)
        s.on_complete()

    Flowable.create(push, B.BUFFER).test().assert_result(1).assert_no_violations()


def test_create_bad_arguments() -> None:
    with pytest.raises(TypeError):
        Flowable.create(42, B.BUFFER)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.create(pusher([]), "buffer")  # type: ignore[arg-type]


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(), max_size=40),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=20),
    st.sampled_from([B.BUFFER, B.DROP, B.LATEST]),
)
def test_create_property_matches_model(
    data: list[int], requests: list[int], strategy: BackpressureStrategy
) -> None:
    """A synchronous push before any request, then the given requests: compare with a model."""
    first, rest = requests[0], requests[1:]
    ts = Flowable.create(pusher(data), strategy).test(first)
    for n in rest:
        ts.request(n)
    total = sum(requests)
    if strategy is B.BUFFER:
        want = data[:total]
        done = total >= len(data)
    elif strategy is B.DROP:
        want = data[:first]
        done = True
    else:  # LATEST: the first `first` items, then the last one (if any was held back)
        want = data[:first] + (data[-1:] if len(data) > first and total > first else [])
        done = len(data) <= first or total > first
    assert ts.values == want
    assert (ts.completions == 1) == done
    ts.assert_no_violations()


# ---------------------------------------------------------------------------------------------
# generate


def counter(limit: int) -> Any:
    def step(n: int, e: Any) -> int:
        if n < limit:
            e.on_next(n)
        else:
            e.on_complete()
        return n + 1

    return step


def test_generate_emits_under_demand_and_disposes_once() -> None:
    disposed: list[int] = []
    ts = Flowable.generate(lambda: 0, counter(5), disposed.append).test(2)
    ts.assert_values(0, 1).assert_not_complete()
    assert disposed == []
    ts.request(10).assert_result(0, 1, 2, 3, 4).assert_no_violations()
    assert disposed == [6]


def test_generate_cancel_disposes_once() -> None:
    disposed: list[int] = []
    ts = Flowable.generate(lambda: 0, counter(100), disposed.append).test(3)
    ts.cancel()
    ts.cancel()
    ts.request(5)
    ts.assert_values(0, 1, 2).assert_no_violations()
    assert disposed == [3]


def test_generate_cancel_from_on_next_disposes_once() -> None:
    disposed: list[int] = []

    class CancelAt3(TestSubscriber[int]):
        def on_next(self, item: int) -> None:
            super().on_next(item)
            if item == 3:
                self.cancel()

    ts = CancelAt3()
    Flowable.generate(lambda: 0, counter(100), disposed.append).subscribe(ts)
    ts.assert_values(0, 1, 2, 3).assert_no_violations()
    assert disposed == [4]


def test_generate_million_elements_in_chunks_no_recursion() -> None:
    n = 1_000_000
    count = [0]

    class Chunky(TestSubscriber[int]):
        def on_next(self, item: int) -> None:
            count[0] += 1
            if count[0] % 1000 == 0:
                self.request(1000)

    def step(s: int, e: Any) -> int:
        if s < n:
            e.on_next(s)
        else:
            e.on_complete()
        return s + 1

    ts = Chunky(1000)
    Flowable.generate(lambda: 0, step).subscribe(ts)
    assert count[0] == n
    ts.assert_complete().assert_no_errors()


def test_generate_two_on_next_in_one_call_is_a_protocol_violation() -> None:
    disposed: list[int] = []

    def step(s: int, e: Any) -> int:
        e.on_next(1)
        e.on_next(2)
        return s

    ts = Flowable.generate(lambda: 0, step, disposed.append).test()
    ts.assert_values(1).assert_error(ProtocolViolationError).assert_no_violations()
    assert "1.1" in str(ts.errors[0])
    assert disposed == [0]


def test_generate_raising_generator_errors_and_disposes() -> None:
    disposed: list[int] = []

    def step(s: int, e: Any) -> int:
        if s == 2:
            raise KeyError("boom")
        e.on_next(s)
        return s + 1

    ts = Flowable.generate(lambda: 0, step, disposed.append).test()
    ts.assert_values(0, 1).assert_error(KeyError).assert_no_violations()
    assert disposed == [2]


def test_generate_error_from_emitter() -> None:
    def step(s: int, e: Any) -> int:
        e.on_error(ValueError("v"))
        return s

    Flowable.generate(lambda: 0, step).test().assert_error(
        ValueError
    ).assert_no_values().assert_no_violations()


def test_generate_on_next_none_is_type_error() -> None:
    def step(s: int, e: Any) -> int:
        e.on_next(None)
        return s

    Flowable.generate(lambda: 0, step).test().assert_error(TypeError).assert_no_violations()


def test_generate_state_fn_raising() -> None:
    def bad() -> int:
        raise OSError("no state")

    Flowable.generate(bad, counter(3)).test().assert_error(OSError).assert_no_violations()


def test_generate_dispose_error_goes_to_hook(undeliverable: list[BaseException]) -> None:
    def dispose(s: int) -> None:
        raise RuntimeError("dispose failed")

    Flowable.generate(lambda: 0, counter(2), dispose).test().assert_result(0, 1).assert_no_violations()
    assert [type(e) for e in undeliverable] == [RuntimeError]


def test_generate_steps_without_emission_do_not_use_demand() -> None:
    def step(s: int, e: Any) -> int:
        if s >= 10:
            e.on_complete()
        elif s % 2 == 0:
            e.on_next(s)
        return s + 1

    ts = Flowable.generate(lambda: 0, step).test(2)
    ts.assert_values(0, 2).assert_not_complete()
    ts.request(10).assert_result(0, 2, 4, 6, 8).assert_no_violations()


def test_generate_bad_arguments() -> None:
    with pytest.raises(TypeError):
        Flowable.generate(1, counter(1))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.generate(lambda: 0, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.generate(lambda: 0, counter(1), 5)  # type: ignore[arg-type]


def test_generate_concurrent_requests_emit_each_once() -> None:
    for seed in range(3):
        rnd = random.Random(seed)
        ts: TestSubscriber[int] = TestSubscriber(0)
        Flowable.generate(lambda: 0, counter(4000)).subscribe(ts)
        amounts = [rnd.randint(1, 50) for _ in range(200)]
        threads = [
            threading.Thread(target=lambda a=amounts[i::4], t=ts: [t.request(n) for n in a], daemon=True)
            for i in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        want = min(sum(amounts), 4000)
        ts.await_count(want, 5)
        assert ts.values == list(range(want))
        ts.assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(
    st.integers(min_value=0, max_value=50),
    st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=15),
)
def test_generate_property_matches_model(n: int, requests: list[int]) -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    disposed: list[int] = []
    Flowable.generate(lambda: 0, counter(n), disposed.append).subscribe(ts)
    for r in requests:
        ts.request(r)
    total = sum(requests)
    assert ts.values == list(range(min(n, total)))
    # completion needs one more generator call after the last element, which needs demand
    assert ts.completions == (1 if total > n else 0)
    assert disposed == ([n + 1] if total > n else [])
    ts.assert_no_violations()
