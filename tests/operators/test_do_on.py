"""do_on_next, do_on_error, do_on_complete, do_on_subscribe, do_on_request, do_on_cancel, do_finally:
when each callback runs, what a raising callback does (rules 3.15, 3.16: request and cancel never
raise; such errors go to the undeliverable hook), and do_finally's exactly-once under races."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable
from rstreams.testing import TestPublisher, TestSubscriber

from .harness import Boom, check_raising, check_scenarios

MAX = 2**63 - 1


def raiser(*_: Any) -> Any:
    raise Boom("callback")


def both(data: list[Any]) -> list[tuple[str, Flowable[Any]]]:
    return [("fused", Flowable.from_iterable(data)), ("hidden", Flowable.from_iterable(data).hide())]


def noop(*_: Any) -> None:
    return None


OPS = ["do_on_next", "do_on_error", "do_on_complete", "do_on_subscribe", "do_on_request", "do_on_cancel", "do_finally"]


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("data", [[], [1], list(range(10))], ids=["empty", "one", "range"])
def test_scenarios_pass_everything_through(name: str, data: list[int]) -> None:
    check_scenarios(lambda f: getattr(f, name)(noop), data, data)


@pytest.mark.parametrize("name", OPS)
def test_non_callable_argument(name: str) -> None:
    with pytest.raises(TypeError):
        getattr(Flowable.range(0, 3), name)(42)


@settings(max_examples=50, deadline=None)
@given(
    data=st.lists(st.integers(), max_size=20),
    pattern=st.lists(st.integers(1, 4), max_size=6),
    name=st.sampled_from(OPS),
)
def test_property_pass_through(data: list[int], pattern: list[int], name: str) -> None:
    for _, src in both(data):
        ts: TestSubscriber[int] = TestSubscriber(0)
        getattr(src, name)(noop).subscribe(ts)
        for n in pattern:
            ts.request(n)
        ts.request(MAX)
        ts.assert_result(*data).assert_no_violations()


# ----------------------------------------------------------------------------------------------
# do_on_next


def test_do_on_next_sees_each_element_before_downstream() -> None:
    seen: list[tuple[str, int]] = []
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.range(0, 3).do_on_next(lambda x: seen.append(("cb", x))).subscribe(ts)
    assert seen == [("cb", 0), ("cb", 1), ("cb", 2)]
    ts.assert_result(0, 1, 2).assert_no_violations()


def test_do_on_next_raising_cancels_upstream_and_fails() -> None:
    check_raising(lambda f: f.do_on_next(raiser), [1, 2, 3])
    for _, src in both([1, 2, 3]):
        src.do_on_next(raiser).test().assert_no_values().assert_error(Boom).assert_no_violations()


# ----------------------------------------------------------------------------------------------
# do_on_error / do_on_complete


def test_do_on_error_sees_the_error() -> None:
    got: list[BaseException] = []
    err = Boom("up")
    Flowable.error(err).do_on_error(got.append).test().assert_error(Boom).assert_no_violations()
    assert got == [err]


def test_do_on_error_raising_gives_an_exception_group() -> None:
    ts = Flowable.error(Boom("up")).do_on_error(lambda e: (_ for _ in ()).throw(KeyError("cb"))).test()
    ts.assert_error(ExceptionGroup).assert_no_violations()
    group = ts.errors[0]
    assert isinstance(group, ExceptionGroup)
    assert [type(e) for e in group.exceptions] == [Boom, KeyError]


def test_do_on_complete_runs_before_on_complete() -> None:
    order: list[str] = []

    class Rec(TestSubscriber[int]):
        def on_complete(self) -> None:
            order.append("downstream")
            super().on_complete()

    ts = Rec()
    Flowable.range(0, 2).do_on_complete(lambda: order.append("callback")).subscribe(ts)
    assert order == ["callback", "downstream"]
    ts.assert_result(0, 1).assert_no_violations()


def test_do_on_complete_raising_becomes_on_error() -> None:
    for _, src in both([1, 2]):
        src.do_on_complete(raiser).test().assert_values(1, 2).assert_error(Boom).assert_not_complete()


def test_do_on_complete_not_called_on_error() -> None:
    called: list[bool] = []
    Flowable.error(Boom("x")).do_on_complete(lambda: called.append(True)).test().assert_error(Boom)
    assert not called


# ----------------------------------------------------------------------------------------------
# do_on_subscribe


def test_do_on_subscribe_gets_the_upstream_subscription() -> None:
    got: list[Any] = []
    Flowable.range(0, 3).do_on_subscribe(got.append).test().assert_result(0, 1, 2).assert_no_violations()
    assert len(got) == 1 and hasattr(got[0], "request")


def test_do_on_subscribe_raising_cancels_upstream_then_on_subscribe_and_on_error() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.from_publisher(tp).do_on_subscribe(raiser).test()
    ts.assert_subscribed().assert_no_values().assert_error(Boom).assert_no_violations()
    assert tp.was_cancelled
    assert ts.signals[0][0] == "on_subscribe"


# ----------------------------------------------------------------------------------------------
# do_on_request / do_on_cancel


def test_do_on_request_sees_each_request() -> None:
    got: list[int] = []
    ts = Flowable.range(0, 10).do_on_request(got.append).test(2)
    ts.request(3)
    assert got == [2, 3]
    ts.assert_values(0, 1, 2, 3, 4).assert_no_violations()


def test_do_on_cancel_runs_once_on_downstream_cancel() -> None:
    calls: list[bool] = []
    ts = Flowable.never().do_on_cancel(lambda: calls.append(True)).test()
    ts.cancel()
    ts.cancel()
    assert calls == [True]
    ts.assert_no_violations()


# ----------------------------------------------------------------------------------------------
# do_finally


@pytest.mark.parametrize("how", ["complete", "error", "cancel"])
def test_do_finally_runs_once_after_the_terminal_signal(how: str) -> None:
    order: list[str] = []

    class Rec(TestSubscriber[int]):
        def on_complete(self) -> None:
            order.append("complete")
            super().on_complete()

        def on_error(self, error: BaseException) -> None:
            order.append("error")
            super().on_error(error)

    ts = Rec(0)
    if how == "complete":
        src: Flowable[int] = Flowable.range(0, 2)
    elif how == "error":
        src = Flowable.error(Boom("x"))
    else:
        src = Flowable.never()
    src.do_finally(lambda: order.append("finally")).subscribe(ts)
    ts.request(5)
    if how == "cancel":
        ts.cancel()
        ts.cancel()
    assert order == {"complete": ["complete", "finally"], "error": ["error", "finally"], "cancel": ["finally"]}[how]
    ts.assert_no_violations()


def test_do_finally_raising_goes_to_the_hook(undeliverable: list[BaseException]) -> None:
    Flowable.range(0, 2).do_finally(raiser).test().assert_result(0, 1).assert_no_violations()
    assert len(undeliverable) == 1


def test_do_finally_exactly_once_when_cancel_races_completion() -> None:
    rnd = random.Random(99)
    for _ in range(100):
        calls: list[bool] = []
        tp: TestPublisher[int] = TestPublisher.create()
        ts = Flowable.from_publisher(tp).do_finally(lambda calls=calls: calls.append(True)).test()
        barrier = threading.Barrier(2)

        def complete(tp: TestPublisher[int] = tp, b: threading.Barrier = barrier) -> None:
            b.wait(5)
            tp.complete()

        t = threading.Thread(target=complete)
        t.start()
        barrier.wait(5)
        if rnd.random() < 0.5:
            ts.cancel()
        else:
            ts.cancel()
            ts.cancel()
        t.join(5)
        assert calls == [True]
        ts.assert_no_violations()


# -- do_on_terminate, do_after_terminate, do_on_each (RxJava) ------------------------------------


def test_do_on_terminate_runs_before_the_terminal_signal_once_and_not_on_cancel() -> None:
    log: list[str] = []
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.just(1).do_on_terminate(lambda: log.append("terminate")).do_on_complete(lambda: log.append("complete")).subscribe(ts)
    ts.assert_result(1).assert_no_violations()
    assert log == ["terminate", "complete"]
    log.clear()
    Flowable.error(KeyError("x")).do_on_terminate(lambda: log.append("terminate")).test().assert_failure(KeyError).assert_no_violations()
    assert log == ["terminate"]
    log.clear()
    tp: TestPublisher[int] = TestPublisher.create()
    ts2: TestSubscriber[int] = Flowable.from_publisher(tp).do_on_terminate(lambda: log.append("terminate")).test()
    ts2.cancel()
    assert log == []
    ts2.assert_no_violations()


def test_do_on_terminate_raising_fails_the_stream() -> None:
    def boom() -> None:
        raise KeyError("terminate")

    Flowable.just(1).do_on_terminate(boom).test().assert_failure(KeyError, 1).assert_no_violations()
    ts: TestSubscriber[int] = Flowable.error(ValueError("up")).do_on_terminate(boom).test()
    ts.assert_no_violations()
    assert len(ts.errors) == 1  # both errors, grouped (as do_on_error)
    assert isinstance(ts.errors[0], BaseExceptionGroup)


def test_do_after_terminate_runs_after_the_downstream_and_not_on_cancel() -> None:
    log: list[str] = []
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.just(1).do_after_terminate(lambda: log.append("after")).do_on_complete(lambda: log.append("complete")).subscribe(ts)
    ts.assert_result(1).assert_no_violations()
    assert log == ["complete", "after"]
    tp: TestPublisher[int] = TestPublisher.create()
    ts2: TestSubscriber[int] = Flowable.from_publisher(tp).do_after_terminate(lambda: log.append("cancelled?")).test()
    ts2.cancel()
    assert log == ["complete", "after"]
    ts2.assert_no_violations()


def test_do_after_terminate_raising_goes_to_the_plugins() -> None:
    from rstreams import plugins

    def boom() -> None:
        raise KeyError("after")

    with plugins.collect_errors() as hooked:
        Flowable.just(1).do_after_terminate(boom).test().assert_result(1).assert_no_violations()
    assert any(isinstance(e, KeyError) for e in hooked)


def test_do_on_each_sees_every_signal_and_a_raising_on_next_reaches_on_error() -> None:
    log: list[Any] = []
    Flowable.just(1, 2).do_on_each(on_next=log.append, on_error=log.append, on_complete=lambda: log.append("done")).test().assert_result(1, 2).assert_no_violations()
    assert log == [1, 2, "done"]
    log.clear()

    def bad(x: int) -> None:
        if x == 2:
            raise KeyError("two")

    ts: TestSubscriber[int] = Flowable.range(0, 5).do_on_each(on_next=bad, on_error=log.append).test()
    ts.assert_failure(KeyError, 0, 1).assert_no_violations()
    assert len(log) == 1 and isinstance(log[0], KeyError)
    with pytest.raises(TypeError):
        Flowable.just(1).do_on_each()
