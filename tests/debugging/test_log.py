"""log(): the signals crossing a point, through the logging module, with the stage's name and thread."""

from __future__ import annotations

import logging
import threading

import pytest

from rstreams import Flowable, schedulers
from rstreams.testing import TestSubscriber


def messages(caplog: pytest.LogCaptureFixture, logger: str = "rstreams.log") -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith(logger)]


def test_default_signals_without_elements(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="rstreams.log")
    ts = Flowable.range(0, 3).log("nums").test(2)
    ts.request(5).assert_result(0, 1, 2).assert_no_violations()
    me = threading.current_thread().name
    assert messages(caplog) == [
        f"nums | on_subscribe() | thread {me}",
        f"nums | request(2) | thread {me}",
        f"nums | request(5) | thread {me}",
        f"nums | on_complete() | thread {me}",
    ]
    assert {r.name for r in caplog.records} == {"rstreams.log.nums"}
    assert {r.levelno for r in caplog.records} == {logging.INFO}


def test_on_next_error_and_unbounded_request(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="rstreams.log")
    ts = Flowable.just(1, 0).map(lambda x: 1 // x).log("div", logging.DEBUG, signals=["on_next", "on_error", "request"]).test()
    ts.assert_error(ZeroDivisionError).assert_values(1).assert_no_violations()
    got = [m.split(" | thread")[0] for m in messages(caplog)]
    assert got == ["div | request(unbounded)", "div | on_next(1)", "div | on_error(ZeroDivisionError('integer division or modulo by zero'))"]
    assert {r.levelno for r in caplog.records} == {logging.DEBUG}


def test_cancel_and_the_thread_of_each_signal(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="rstreams.log")
    ts = (
        Flowable.interval(0.001, scheduler=schedulers.single())
        .log("ticks", signals=["on_next", "cancel"])
        .take(3)
        .test()
        .await_done()
    )
    ts.assert_result(0, 1, 2).assert_no_violations()
    got = messages(caplog)
    assert [m.split(" | ")[1] for m in got] == ["on_next(0)", "on_next(1)", "on_next(2)", "cancel()"]
    assert all(threading.current_thread().name not in m for m in got[:3])
    assert all(m.startswith("ticks | ") for m in got)


def test_default_name_and_own_logger(caplog: pytest.LogCaptureFixture) -> None:
    mine = logging.getLogger("tests.pipeline")
    caplog.set_level(logging.INFO, logger="tests.pipeline")
    Flowable.empty().log(logger=mine).test().assert_result().assert_no_violations()
    got = messages(caplog, "tests.pipeline")
    assert len(got) == 3 and got[0].startswith("log#") and "on_complete()" in got[2]


def test_disabled_level_logs_nothing_and_passes_everything(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="rstreams.log")
    ts: TestSubscriber[int] = Flowable.range(0, 100).log("quiet", signals=["on_next"]).test()
    ts.assert_value_count(100).assert_complete().assert_no_violations()
    assert messages(caplog) == []


def test_batches_reach_a_batch_consumer_through_it() -> None:
    ts = Flowable.range(0, 1000).log("x").observe_on(schedulers.single()).test().await_done()
    ts.assert_value_count(1000).assert_complete().assert_no_violations()


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown signals"):
        Flowable.just(1).log(signals=["on_nxt"])
    with pytest.raises(TypeError):
        Flowable.just(1).log(level="INFO")  # type: ignore[arg-type]
