"""Flowable.using (resource per subscription) and Flowable.from_future."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable
from rstreams.testing import TestSubscriber

# ---------------------------------------------------------------------------------------------
# using


class Resource:
    def __init__(self, log: list[str], data: list[int] | None = None) -> None:
        self.log = log
        self.data = data if data is not None else [1, 2, 3]
        log.append("acquire")

    def dispose(self) -> None:
        self.log.append("dispose")


class Recorder(TestSubscriber[Any]):
    """Logs terminal signals into the same list as the resource, to check the order."""

    def __init__(self, log: list[str], initial: int = 2**63 - 1) -> None:
        super().__init__(initial)
        self.log = log

    def on_complete(self) -> None:
        self.log.append("complete")
        super().on_complete()

    def on_error(self, error: BaseException) -> None:
        self.log.append("error")
        super().on_error(error)


def make(log: list[str], eager: bool, source: Any = None) -> Flowable[int]:
    return Flowable.using(
        lambda: Resource(log),
        source if source is not None else (lambda r: Flowable.from_iterable(r.data)),
        lambda r: r.dispose(),
        eager,
    )


@pytest.mark.parametrize(
    "eager,order", [(True, ["acquire", "dispose", "complete"]), (False, ["acquire", "complete", "dispose"])]
)
def test_using_completion_disposes_once_in_order(eager: bool, order: list[str]) -> None:
    log: list[str] = []
    ts = Recorder(log)
    make(log, eager).subscribe(ts)
    ts.assert_result(1, 2, 3).assert_no_violations()
    assert log == order


@pytest.mark.parametrize(
    "eager,order", [(True, ["acquire", "dispose", "error"]), (False, ["acquire", "error", "dispose"])]
)
def test_using_error_disposes_once_in_order(eager: bool, order: list[str]) -> None:
    log: list[str] = []
    ts = Recorder(log)
    make(log, eager, lambda r: Flowable.concat(Flowable.just(1), Flowable.error(KeyError("k")))).subscribe(ts)
    ts.assert_values(1).assert_error(KeyError).assert_no_violations()
    assert log == order


@pytest.mark.parametrize("eager", [True, False])
def test_using_cancel_disposes_once(eager: bool) -> None:
    log: list[str] = []
    cancels: list[str] = []
    src = lambda r: Flowable.from_iterable(r.data).hide().do_on_cancel(lambda: log.append("upstream-cancel"))  # noqa: E731
    ts = Recorder(log, 1)
    make(log, eager, src).subscribe(ts)
    ts.cancel()
    ts.cancel()
    ts.request(5)
    ts.assert_values(1).assert_no_violations()
    assert cancels == []
    if eager:
        assert log == ["acquire", "dispose", "upstream-cancel"]
    else:
        assert log == ["acquire", "upstream-cancel", "dispose"]


@pytest.mark.parametrize("eager", [True, False])
def test_using_cancel_from_on_next_then_complete_disposes_once(eager: bool) -> None:
    log: list[str] = []

    class CancelFirst(TestSubscriber[int]):
        def on_next(self, item: int) -> None:
            super().on_next(item)
            self.cancel()

    ts = CancelFirst()
    make(log, eager).subscribe(ts)
    ts.assert_values(1).assert_no_violations()
    assert log.count("dispose") == 1


def test_using_resource_fn_raising_signals_error_without_dispose() -> None:
    disposed: list[int] = []

    def bad() -> int:
        raise OSError("cannot open")

    Flowable.using(bad, lambda r: Flowable.just(1), disposed.append).test().assert_error(
        OSError
    ).assert_no_violations()
    assert disposed == []


def test_using_source_fn_raising_disposes_and_signals() -> None:
    disposed: list[int] = []

    def bad(r: int) -> Flowable[int]:
        raise ValueError("no source")

    Flowable.using(lambda: 7, bad, disposed.append).test().assert_error(ValueError).assert_no_violations()
    assert disposed == [7]


def test_using_source_fn_and_dispose_raising_are_combined() -> None:
    def bad(r: int) -> Flowable[int]:
        raise ValueError("no source")

    def dispose(r: int) -> None:
        raise KeyError("dispose")

    ts = Flowable.using(lambda: 7, bad, dispose).test()
    ts.assert_error(ExceptionGroup).assert_no_violations()
    assert [type(e) for e in ts.errors[0].exceptions] == [ValueError, KeyError]  # type: ignore[attr-defined]


def test_using_source_fn_returning_none() -> None:
    disposed: list[int] = []
    Flowable.using(lambda: 7, lambda r: None, disposed.append).test().assert_error(
        TypeError
    ).assert_no_violations()  # type: ignore[arg-type,return-value]
    assert disposed == [7]


def test_using_eager_dispose_error_replaces_completion() -> None:
    def dispose(r: int) -> None:
        raise KeyError("dispose")

    Flowable.using(lambda: 1, lambda r: Flowable.just(1, 2), dispose, True).test().assert_values(
        1, 2
    ).assert_error(KeyError).assert_no_violations()


def test_using_eager_dispose_error_combined_with_upstream_error() -> None:
    def dispose(r: int) -> None:
        raise KeyError("dispose")

    ts = Flowable.using(lambda: 1, lambda r: Flowable.error(ValueError("up")), dispose, True).test()
    ts.assert_error(ExceptionGroup).assert_no_violations()
    assert [type(e) for e in ts.errors[0].exceptions] == [ValueError, KeyError]  # type: ignore[attr-defined]


@pytest.mark.parametrize("upstream_fails", [False, True])
def test_using_non_eager_dispose_error_goes_to_hook(
    upstream_fails: bool, undeliverable: list[BaseException]
) -> None:
    def dispose(r: int) -> None:
        raise KeyError("dispose")

    src = Flowable.error(ValueError("up")) if upstream_fails else Flowable.just(1)
    ts = Flowable.using(lambda: 1, lambda r: src, dispose, False).test()
    if upstream_fails:
        ts.assert_error(ValueError)
    else:
        ts.assert_result(1)
    ts.assert_no_violations()
    assert [type(e) for e in undeliverable] == [KeyError]


def test_using_dispose_error_on_cancel_goes_to_hook(undeliverable: list[BaseException]) -> None:
    def dispose(r: int) -> None:
        raise KeyError("dispose")

    ts = Flowable.using(lambda: 1, lambda r: Flowable.never(), dispose).test()
    ts.cancel()
    ts.assert_empty().assert_no_violations()
    assert [type(e) for e in undeliverable] == [KeyError]


def test_using_resource_per_subscription() -> None:
    log: list[str] = []
    f = make(log, True)
    f.test().assert_result(1, 2, 3)
    f.test().assert_result(1, 2, 3)
    assert log == ["acquire", "dispose"] * 2


def test_using_scenarios() -> None:
    from .harness import check_scenarios

    log: list[str] = []

    def op(src: Flowable[Any]) -> Flowable[Any]:
        return Flowable.using(lambda: log.append("a"), lambda r: src, lambda r: log.append("d"))

    check_scenarios(op, [1, 2, 3, 4], [1, 2, 3, 4])
    assert log.count("a") == log.count("d") > 0


def test_using_concurrent_cancel_and_complete_disposes_once() -> None:
    for _ in range(50):
        disposed: list[int] = []
        go = threading.Barrier(2)
        holder: dict[str, Any] = {}

        def src(r: int) -> Flowable[int]:
            def push(e: Any) -> None:
                holder["e"] = e  # noqa: B023

            return Flowable.create(push)

        ts = Flowable.using(lambda: 1, src, disposed.append).test()
        e = holder["e"]

        def complete() -> None:
            go.wait(5)  # noqa: B023
            e.on_complete()  # noqa: B023

        t = threading.Thread(target=complete, daemon=True)
        t.start()
        go.wait(5)
        ts.cancel()
        t.join(5)
        assert disposed == [1]
        ts.assert_no_violations()


def test_using_bad_arguments() -> None:
    with pytest.raises(TypeError):
        Flowable.using(1, lambda r: Flowable.just(1), print)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.using(lambda: 1, lambda r: Flowable.just(1), None)  # type: ignore[arg-type]


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(), max_size=30), st.integers(min_value=0, max_value=35), st.booleans(), st.booleans()
)
def test_using_property_disposes_exactly_once(data: list[int], k: int, eager: bool, hide: bool) -> None:
    """For any data and any number requested before a cancel: the values are a prefix, one dispose."""
    disposed: list[int] = []
    src = Flowable.from_iterable(data)
    if hide:
        src = src.hide()
    ts: TestSubscriber[int] = TestSubscriber(k)
    Flowable.using(lambda: 5, lambda r: src, disposed.append, eager).subscribe(ts)
    ts.cancel()
    assert ts.values == data[:k]
    assert disposed == [5]
    ts.assert_no_violations()


# ---------------------------------------------------------------------------------------------
# from_future


def test_from_future_thread_pool_value() -> None:
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        fut = ex.submit(lambda: time.sleep(0.02) or 42)
        Flowable.from_future(fut).test().await_done(5).assert_result(42).assert_no_violations()


def test_from_future_value_held_until_requested() -> None:
    fut: concurrent.futures.Future[int] = concurrent.futures.Future()
    ts = Flowable.from_future(fut).test(0)
    fut.set_result(7)
    ts.assert_no_values().assert_not_complete()
    ts.request(1).assert_result(7).assert_no_violations()


def test_from_future_already_done() -> None:
    fut: concurrent.futures.Future[int] = concurrent.futures.Future()
    fut.set_result(3)
    Flowable.from_future(fut).test().assert_result(3).assert_no_violations()
    Flowable.from_future(fut, timeout=0.01).test().assert_result(3).assert_no_violations()


def test_from_future_exception() -> None:
    with concurrent.futures.ThreadPoolExecutor(1) as ex:

        def fail() -> int:
            raise KeyError("k")

        fut = ex.submit(fail)
        Flowable.from_future(fut).test().await_done(5).assert_error(KeyError).assert_no_violations()


def test_from_future_cancelled_future() -> None:
    fut: concurrent.futures.Future[int] = concurrent.futures.Future()
    ts = Flowable.from_future(fut).test()
    fut.cancel()
    ts.await_done(5).assert_error(concurrent.futures.CancelledError).assert_no_violations()


def test_from_future_none_result_is_type_error() -> None:
    fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
    fut.set_result(None)
    Flowable.from_future(fut).test().assert_error(TypeError).assert_no_violations()


def _timer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "rstreams-from_future-timeout"]


def _await_no_timer_threads() -> None:
    deadline = time.monotonic() + 2
    while _timer_threads() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert not _timer_threads()


def test_from_future_timeout() -> None:
    fut: concurrent.futures.Future[int] = concurrent.futures.Future()
    ts = Flowable.from_future(fut, timeout=0.05).test()
    ts.await_done(5).assert_error(TimeoutError).assert_no_violations()
    fut.set_result(1)  # late: ignored
    ts.assert_no_values()
    _await_no_timer_threads()


def test_from_future_timer_stops_when_future_completes() -> None:
    fut: concurrent.futures.Future[int] = concurrent.futures.Future()
    ts = Flowable.from_future(fut, timeout=30).test()
    assert _timer_threads()
    fut.set_result(5)
    ts.assert_result(5).assert_no_violations()
    _await_no_timer_threads()


def test_from_future_cancel_stops_timer_and_ignores_result(undeliverable: list[BaseException]) -> None:
    fut: concurrent.futures.Future[int] = concurrent.futures.Future()
    ts = Flowable.from_future(fut, timeout=30).test()
    ts.cancel()
    _await_no_timer_threads()
    fut.set_result(5)
    ts.assert_empty().assert_no_violations()
    assert not fut.cancelled(), "cancelling the subscription does not cancel the future"
    assert not undeliverable


def test_from_future_race_value_vs_request() -> None:
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        for _ in range(50):
            fut: concurrent.futures.Future[int] = concurrent.futures.Future()
            ts = Flowable.from_future(fut).test(0)
            go = threading.Barrier(2)
            a = ex.submit(lambda: (go.wait(5), fut.set_result(9)))  # noqa: B023
            b = ex.submit(lambda: (go.wait(5), ts.request(1)))  # noqa: B023
            a.result(5)
            b.result(5)
            ts.await_done(5).assert_result(9).assert_no_violations()


def test_from_future_bad_arguments() -> None:
    with pytest.raises(TypeError):
        Flowable.from_future(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Flowable.from_future(concurrent.futures.Future(), timeout=-1)
    with pytest.raises(TypeError):
        Flowable.from_future(concurrent.futures.Future(), timeout="1")  # type: ignore[arg-type]
