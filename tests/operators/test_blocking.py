"""Blocking bridges: blocking_iterable, blocking_first, blocking_last, blocking_subscribe, to_future."""

from __future__ import annotations

import concurrent.futures
import gc
import threading
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import BackpressureStrategy, Flowable, MissingBackpressureError, NoSuchElementError

MAX = 2**63 - 1


class Boom(Exception):
    pass


def failing(n: int) -> Flowable[int]:
    return Flowable.concat(Flowable.range(0, n), Flowable.error(Boom("failed")))


def threaded(items: list[Any], error: BaseException | None = None, delay: float = 0.0) -> Flowable[Any]:
    """Emits from its own thread, honouring demand (BUFFER)."""

    def push(e: Any) -> None:
        def run() -> None:
            for x in items:
                if e.is_cancelled:
                    return
                if delay:
                    time.sleep(delay)
                e.on_next(x)
            if error is not None:
                e.on_error(error)
            else:
                e.on_complete()

        threading.Thread(target=run, daemon=True).start()

    return Flowable.create(push, BackpressureStrategy.BUFFER)


def spy(src: Flowable[Any]) -> tuple[Flowable[Any], dict[str, list[Any]]]:
    log: dict[str, list[Any]] = {"requests": [], "cancels": [], "emitted": []}
    f = (
        src.do_on_next(log["emitted"].append)
        .do_on_request(log["requests"].append)
        .do_on_cancel(lambda: log["cancels"].append(1))
    )
    return f, log


# ---------------------------------------------------------------------------------------------
# blocking_iterable


@pytest.mark.parametrize("hide", [False, True])
def test_iterable_yields_all(hide: bool) -> None:
    src = Flowable.range(0, 1000)
    assert list((src.hide() if hide else src).blocking_iterable(16)) == list(range(1000))


def test_iter_protocol_on_flowable() -> None:
    assert list(Flowable.just(1, 2, 3)) == [1, 2, 3]
    assert [x for x in Flowable.just(1, 2, 3).hide()] == [1, 2, 3]


def test_iterable_from_another_thread() -> None:
    assert list(threaded(list(range(500))).blocking_iterable(8)) == list(range(500))


def test_iterable_slow_producer_thread_blocks_and_wakes() -> None:
    assert list(threaded(list(range(20)), delay=0.002).blocking_iterable(4)) == list(range(20))


@pytest.mark.parametrize("source", ["sync", "thread"])
def test_iterable_error_raised_where_reached(source: str) -> None:
    f = failing(3) if source == "sync" else threaded([0, 1, 2], Boom("failed"))
    got: list[int] = []
    with pytest.raises(Boom):
        for x in f.blocking_iterable(2):
            got.append(x)
    assert got == [0, 1, 2]


def test_iterable_fused_error_and_none() -> None:
    def gen() -> Any:
        yield 1
        raise Boom("in generator")

    it = Flowable.from_iterable(gen()).blocking_iterable()
    assert next(it) == 1
    with pytest.raises(Boom):
        next(it)
    with pytest.raises(StopIteration):
        next(it)
    with pytest.raises(TypeError, match="map"):
        list(Flowable.range(0, 3).map(lambda x: None if x == 1 else x).blocking_iterable())
    with pytest.raises(TypeError, match="map"):
        list(Flowable.range(0, 3).hide().map(lambda x: None if x == 1 else x).blocking_iterable())


@pytest.mark.parametrize("prefetch,limit", [(1, 1), (4, 3), (10, 8), (128, 96)])
def test_iterable_prefetch_bound_and_replenish(prefetch: int, limit: int) -> None:
    f, log = spy(Flowable.range(0, 300).hide())
    consumed = 0
    for _ in f.blocking_iterable(prefetch):
        consumed += 1
        assert len(log["emitted"]) - consumed <= prefetch, "more than prefetch buffered"
    assert consumed == 300
    assert log["requests"][0] == prefetch
    assert set(log["requests"][1:]) == {limit}


def test_iterable_prefetch_bound_with_thread_producer() -> None:
    f, log = spy(threaded(list(range(2000))))
    consumed = 0
    for _ in f.blocking_iterable(16):
        consumed += 1
        assert len(log["emitted"]) - consumed <= 16
    assert consumed == 2000 and log["requests"][0] == 16 and set(log["requests"][1:]) == {12}


def test_iterable_break_cancels_upstream() -> None:
    f, log = spy(Flowable.range(0, 10_000).hide())
    it = f.blocking_iterable(8)
    for x in it:  # `it` stays referenced: the generator wrapper's finally cancels
        if x == 3:
            break
    assert log["cancels"] == [1]
    assert len(log["emitted"]) <= 8


def test_iterable_break_out_of_flowable_for_loop_cancels() -> None:
    f, log = spy(Flowable.range(0, 10_000).hide())
    for x in f:
        if x == 3:
            break
    gc.collect()
    assert log["cancels"] == [1]


def test_iterable_exception_in_loop_body_cancels() -> None:
    f, log = spy(threaded(list(range(10_000))))
    it = f.blocking_iterable(8)
    with pytest.raises(KeyError):
        for x in it:
            if x == 5:
                raise KeyError("body")
    assert log["cancels"] == [1]


def test_iterable_close_and_gc_cancel() -> None:
    f, log = spy(Flowable.range(0, 100).hide())
    it = f.blocking_iterable(4)
    assert next(it) == 0
    it.close()  # type: ignore[attr-defined]
    assert log["cancels"] == [1]
    with pytest.raises(StopIteration):
        next(it)

    f2, log2 = spy(Flowable.range(0, 100).hide())
    it2 = f2.blocking_iterable(4)
    assert next(it2) == 0
    del it2
    gc.collect()
    assert log2["cancels"] == [1]


def test_iterable_context_manager() -> None:
    f, log = spy(Flowable.range(0, 100).hide())
    with f.blocking_iterable(4) as it:  # type: ignore[attr-defined]
        assert next(it) == 0
    assert log["cancels"] == [1]


def test_iterable_not_iterated_does_not_subscribe() -> None:
    f, log = spy(Flowable.range(0, 10).hide())
    f.blocking_iterable()
    assert log["requests"] == []


def test_iterable_overflowing_upstream_is_missing_backpressure() -> None:
    src = Flowable.create(lambda e: [e.on_next(i) for i in range(10)], BackpressureStrategy.MISSING)
    with pytest.raises(MissingBackpressureError):
        list(src.blocking_iterable(4))


def test_iterable_bad_prefetch() -> None:
    with pytest.raises(ValueError):
        Flowable.range(0, 3).blocking_iterable(0)
    with pytest.raises(TypeError):
        Flowable.range(0, 3).blocking_iterable(2.0)  # type: ignore[arg-type]


def test_iterable_timeout_cancels_and_raises_when_no_element_comes() -> None:
    f, log = spy(Flowable.never())
    it = f.blocking_iterable(timeout=0.05)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"blocking_iterable\(\): no element within 0.05 s"):
        next(it)
    assert 0.04 <= time.monotonic() - started < 2
    assert log["cancels"] == [1]
    with pytest.raises(StopIteration):  # the iteration is over
        next(it)
    f2, log2 = spy(Flowable.never())
    with pytest.raises(TimeoutError):
        for _ in f2.blocking_iterable(timeout=0.02):  # the generator path
            pass
    assert log2["cancels"] == [1]


def test_iterable_timeout_is_per_element_not_for_the_whole_stream() -> None:
    # 10 elements 30 ms apart: 300 ms in all, each within the 250 ms timeout
    got = list(threaded(list(range(10)), delay=0.03).blocking_iterable(timeout=0.25))
    assert got == list(range(10))
    it = threaded([1, 2], delay=0.4).blocking_iterable(timeout=0.1)
    with pytest.raises(TimeoutError):
        next(it)


def test_iterable_timeout_then_elements_and_error_as_usual() -> None:
    assert list(Flowable.range(0, 300).hide().blocking_iterable(timeout=1)) == list(range(300))
    assert list(Flowable.range(0, 300).blocking_iterable(timeout=0.0)) == list(range(300))  # fused: no wait
    with pytest.raises(Boom):
        list(threaded([1, 2], Boom("failed")).blocking_iterable(timeout=1))
    assert list(Flowable.empty().hide().blocking_iterable(timeout=float("inf"))) == []


def test_iterable_bad_timeout() -> None:
    with pytest.raises(ValueError, match="timeout"):
        Flowable.just(1).blocking_iterable(timeout=-1)
    with pytest.raises(ValueError, match="timeout"):
        Flowable.just(1).blocking_iterable(timeout=float("nan"))
    with pytest.raises(TypeError, match="timeout"):
        Flowable.just(1).blocking_iterable(timeout="1")  # type: ignore[arg-type]


def test_iterable_unfused_sync_source_is_fast() -> None:
    n = 200_000
    t0 = time.perf_counter()
    total = sum(Flowable.range(0, n).hide().blocking_iterable(256))
    elapsed = time.perf_counter() - t0
    assert total == n * (n - 1) // 2
    assert elapsed < 3.0


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(), max_size=60),
    st.integers(min_value=1, max_value=10),
    st.booleans(),
    st.integers(0, 70),
)
def test_iterable_property(data: list[int], prefetch: int, hide: bool, stop: int) -> None:
    src = Flowable.from_iterable(data)
    f, log = spy(src.hide() if hide else src)
    assert list(f.blocking_iterable(prefetch)) == data
    got = []
    for x in f.blocking_iterable(prefetch):
        if len(got) == stop:
            break
        got.append(x)
    assert got == data[:stop]


# ---------------------------------------------------------------------------------------------
# blocking_first / blocking_last


@pytest.mark.parametrize("hide", [False, True])
def test_first_and_last(hide: bool) -> None:
    src = Flowable.range(3, 5)
    src = src.hide() if hide else src
    assert src.blocking_first() == 3
    assert src.blocking_last() == 7


@pytest.mark.parametrize("hide", [False, True])
def test_first_last_empty(hide: bool) -> None:
    src: Flowable[int] = Flowable.empty()
    src = src.hide() if hide else src
    assert src.blocking_first(-1) == -1
    assert src.blocking_last(-1) == -1
    with pytest.raises(NoSuchElementError):
        src.blocking_first()
    with pytest.raises(NoSuchElementError):
        src.blocking_last()


def test_first_last_error() -> None:
    with pytest.raises(Boom):
        failing(0).blocking_first()
    with pytest.raises(Boom):
        failing(3).blocking_last()
    assert failing(3).blocking_first() == 0


def test_first_cancels_after_first() -> None:
    f, log = spy(Flowable.range(0, 100).hide())
    assert f.blocking_first() == 0
    assert log["cancels"] == [1] and log["emitted"] == [0]


def test_first_last_none_is_type_error() -> None:
    for src in (Flowable.range(0, 3).map(lambda x: None), Flowable.range(0, 3).hide().map(lambda x: None)):
        with pytest.raises(TypeError, match="map"):
            src.blocking_first()
        with pytest.raises(TypeError, match="map"):
            src.blocking_last()


def test_first_last_from_another_thread() -> None:
    assert threaded([5, 6, 7], delay=0.001).blocking_first(timeout=5) == 5
    assert threaded([5, 6, 7], delay=0.001).blocking_last(timeout=5) == 7
    with pytest.raises(Boom):
        threaded([1], Boom("x")).blocking_last(timeout=5)


@pytest.mark.parametrize("which", ["first", "last"])
def test_first_last_timeout_cancels(which: str) -> None:
    f, log = spy(Flowable.never())
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        if which == "first":
            f.blocking_first(timeout=0.05)
        else:
            f.blocking_last(timeout=0.05)
    assert time.monotonic() - t0 < 2
    assert log["cancels"] == [1]


def test_last_fused_infinite_source_times_out() -> None:
    import itertools

    with pytest.raises(TimeoutError):
        Flowable.from_iterable(itertools.count()).blocking_last(timeout=0.05)


def test_first_last_sync_source_never_hangs() -> None:
    # a synchronous, non-fused chain completes within subscribe: no timeout needed
    assert Flowable.range(0, 10).hide().filter(lambda x: x > 7).blocking_first() == 8
    assert Flowable.range(0, 10).hide().filter(lambda x: x > 7).blocking_last() == 9


def test_last_large_fused_source() -> None:
    assert Flowable.range(0, 100_000).map(lambda x: x * 2).blocking_last() == 199_998


def test_first_bad_timeout() -> None:
    with pytest.raises(ValueError):
        Flowable.just(1).blocking_first(timeout=-1)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(), max_size=30), st.booleans())
def test_first_last_property(data: list[int], hide: bool) -> None:
    src = Flowable.from_iterable(data)
    src = src.hide() if hide else src
    assert src.blocking_first("d") == (data[0] if data else "d")
    assert src.blocking_last("d") == (data[-1] if data else "d")


# ---------------------------------------------------------------------------------------------
# blocking_subscribe


def test_subscribe_callbacks_on_calling_thread() -> None:
    me = threading.get_ident()
    threads: set[int] = set()
    got: list[int] = []
    done: list[int] = []

    def on_next(x: int) -> None:
        threads.add(threading.get_ident())
        got.append(x)

    threaded(list(range(300))).blocking_subscribe(on_next, None, lambda: done.append(threading.get_ident()))
    assert got == list(range(300))
    assert threads == {me} and done == [me]


def test_subscribe_requests_in_batches() -> None:
    f, log = spy(Flowable.range(0, 1000).hide())
    f.blocking_subscribe(lambda x: None)
    assert log["requests"][0] == 128 and set(log["requests"][1:]) == {96}


def test_subscribe_error_raised_without_on_error() -> None:
    got: list[int] = []
    with pytest.raises(Boom):
        failing(2).blocking_subscribe(got.append)
    assert got == [0, 1]


def test_subscribe_error_to_on_error() -> None:
    errors: list[BaseException] = []
    completes: list[int] = []
    failing(2).blocking_subscribe(None, errors.append, lambda: completes.append(1))
    assert [type(e) for e in errors] == [Boom] and completes == []


def test_subscribe_raising_on_next_cancels_and_reports() -> None:
    # more than the prefetch (128): the upstream is still running when the callback raises (a
    # completed upstream is not cancelled afterwards, rule 2.4)
    f, log = spy(Flowable.range(0, 1000).hide())
    errors: list[BaseException] = []

    def on_next(x: int) -> None:
        if x == 2:
            raise KeyError("cb")

    f.blocking_subscribe(on_next, errors.append)
    assert [type(e) for e in errors] == [KeyError]
    assert log["cancels"] == [1]
    with pytest.raises(KeyError):
        Flowable.range(0, 5).blocking_subscribe(on_next)


def test_subscribe_fused_and_complete() -> None:
    done: list[int] = []
    got: list[int] = []
    Flowable.range(0, 5).blocking_subscribe(got.append, None, lambda: done.append(1))
    assert got == [0, 1, 2, 3, 4] and done == [1]


def test_subscribe_failing_on_error_raises_on_the_calling_thread(undeliverable: list[BaseException]) -> None:
    # before: logged through the undeliverable hook, and blocking_subscribe returned normally
    def bad(e: BaseException) -> None:
        raise RuntimeError("handler")

    for f in (failing(1), failing(1).hide(), threaded([1], Boom("failed"))):
        with pytest.raises(RuntimeError, match="handler") as info:
            f.blocking_subscribe(None, bad)
        assert isinstance(info.value.__context__, Boom)  # the stream's error it was handling
    assert undeliverable == []


@pytest.mark.parametrize("kind", ["fused", "hidden", "thread"])
def test_subscribe_raising_on_complete_raises_on_the_calling_thread(
    kind: str, undeliverable: list[BaseException]
) -> None:
    # before: blocking_subscribe(print, on_complete=lambda: 1/0) logged the error and returned
    src = {"fused": Flowable.range(0, 3), "hidden": Flowable.range(0, 3).hide(), "thread": threaded([0, 1, 2])}[kind]
    got: list[int] = []
    with pytest.raises(ZeroDivisionError):
        src.blocking_subscribe(got.append, on_complete=lambda: 1 / 0)
    assert got == [0, 1, 2]
    assert undeliverable == []


def test_subscribe_raising_on_next_then_raising_on_error_raises_the_handler_error() -> None:
    f, log = spy(Flowable.range(0, 1000).hide())

    def on_next(x: int) -> None:
        raise KeyError("cb")

    def on_error(e: BaseException) -> None:
        raise RuntimeError("handler")

    with pytest.raises(RuntimeError, match="handler") as info:
        f.blocking_subscribe(on_next, on_error)
    assert isinstance(info.value.__context__, KeyError)
    assert log["cancels"] == [1]


# ---------------------------------------------------------------------------------------------
# to_future


def test_to_future_last_value() -> None:
    assert Flowable.just(1, 2).to_future().result(1) == 2
    assert Flowable.range(0, 10).hide().to_future().result(1) == 9
    assert threaded([1, 2, 3]).to_future().result(5) == 3


def test_to_future_empty_and_error() -> None:
    with pytest.raises(NoSuchElementError):
        Flowable.empty().to_future().result(1)
    with pytest.raises(Boom):
        failing(3).to_future().result(1)


def test_to_future_cancel_cancels_subscription() -> None:
    f, log = spy(Flowable.never())
    fut = f.to_future()
    assert fut.cancel()
    assert log["cancels"] == [1]
    with pytest.raises(concurrent.futures.CancelledError):
        fut.result(0)


def test_to_future_with_thread_pool_waiters() -> None:
    fut = threaded(list(range(50)), delay=0.0005).to_future()
    with concurrent.futures.ThreadPoolExecutor(3) as ex:
        results = list(ex.map(lambda _: fut.result(5), range(3)))
    assert results == [49, 49, 49]


def test_to_future_cancel_races_completion() -> None:
    for _ in range(30):
        holder: dict[str, Any] = {}
        fut = Flowable.create(
            lambda e, h=holder: h.setdefault("e", e), BackpressureStrategy.BUFFER
        ).to_future()
        e = holder["e"]
        go = threading.Barrier(2)

        def finish(e: Any = e, go: threading.Barrier = go) -> None:
            go.wait(5)
            e.on_next(1)
            e.on_complete()

        t = threading.Thread(target=finish, daemon=True)
        t.start()
        go.wait(5)
        cancelled = fut.cancel()
        t.join(5)
        assert fut.done()
        if not cancelled:
            assert fut.result(0) == 1


def test_blocking_single() -> None:
    from rstreams.errors import NoSuchElementError

    assert Flowable.just(7).blocking_single() == 7
    assert Flowable.just(7).hide().blocking_single() == 7
    assert Flowable.empty().blocking_single(default=3) == 3
    with pytest.raises(NoSuchElementError):
        Flowable.empty().blocking_single()
    cancelled: list[bool] = []
    with pytest.raises(ValueError, match="more than one"):
        Flowable.range(0, 1000).do_on_cancel(lambda: cancelled.append(True)).blocking_single()
    assert cancelled == [True]
    with pytest.raises(KeyError):
        Flowable.error(KeyError("x")).blocking_single()


def test_blocking_for_each_runs_on_the_calling_thread_and_cancels_when_fn_raises() -> None:
    import threading

    seen: list[tuple[int, str]] = []
    Flowable.range(0, 3).subscribe_on(__import__("rstreams").schedulers.io()).blocking_for_each(
        lambda x: seen.append((x, threading.current_thread().name))
    )
    assert [x for x, _ in seen] == [0, 1, 2]
    assert {name for _, name in seen} == {threading.current_thread().name}
    cancelled: list[bool] = []

    def fn(x: int) -> None:
        if x == 5:
            raise KeyError("five")

    with pytest.raises(KeyError):
        Flowable.range(0, 1000).do_on_cancel(lambda: cancelled.append(True)).blocking_for_each(fn)
    assert cancelled == [True]
    with pytest.raises(ValueError):
        Flowable.concat(Flowable.just(1), Flowable.error(ValueError("up"))).blocking_for_each(lambda x: None)
