"""The internal toolkit (atomics, request accounting, queues, drain helpers), the plugin hooks and
the error types at their edges: each test pins one RxJava 3 / Reactive Streams behaviour; the ones
marked "regression" failed before the fix that came with them."""

from __future__ import annotations

import copy
import math
import pickle
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from rstreams import plugins
from rstreams._internal.atomics import AtomicInt
from rstreams._internal.drain import ErrorCollector, HalfSerializer
from rstreams._internal.requests import MAX_DEMAND, add_request, produced, validate_request
from rstreams.errors import (
    BadRequestError,
    OnErrorNotImplementedError,
    ProtocolViolationError,
    UndeliverableError,
)
from rstreams.retry import RetryExhaustedError
from rstreams.testing import TestSubscriber

WAIT = 5.0


@pytest.fixture(autouse=True)
def _restore_handler() -> Iterator[None]:
    previous = plugins.get_error_handler()
    yield
    plugins.set_error_handler(previous)


# ---------------------------------------------------------------------------------------------
# Atomics and request accounting


def test_atomic_int_compound_operations_are_atomic_under_contention() -> None:
    a = AtomicInt()
    wins = AtomicInt()
    n_threads, per = 8, 2000
    barrier = threading.Barrier(n_threads)

    def work() -> None:
        barrier.wait(WAIT)
        for _ in range(per):
            a.get_and_add(1)
            v = a.get()
            if a.compare_and_set(v, v):  # identity CAS never changes the total
                wins.increment_and_get()

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert a.get() == n_threads * per


def test_add_request_is_capped_and_sticky_rule_3_17() -> None:
    r = AtomicInt()
    assert add_request(r, MAX_DEMAND - 1) == 0
    assert add_request(r, 5) == MAX_DEMAND - 1
    assert r.get() == MAX_DEMAND
    assert add_request(r, 2**70) == MAX_DEMAND
    assert r.get() == MAX_DEMAND
    assert produced(r, 10) == MAX_DEMAND  # unbounded is never decremented
    r2 = AtomicInt()
    add_request(r2, 2**70)
    assert r2.get() == MAX_DEMAND


def test_produced_more_than_requested_floors_at_zero_and_reports_rule_1_1() -> None:
    r = AtomicInt()
    add_request(r, 2)
    with plugins.collect_errors() as errors:
        assert produced(r, 3) == 0
    assert r.get() == 0
    assert len(errors) == 1 and isinstance(errors[0], ProtocolViolationError) and errors[0].rule == "1.1"


class _MyInt(int):
    pass


@pytest.mark.parametrize("n", [1, 5, MAX_DEMAND, 2**70, _MyInt(3)])
def test_validate_request_accepts_positive_ints(n: int) -> None:
    assert validate_request(n) is None


@pytest.mark.parametrize("n", [0, -1, -(2**70), True, False, 1.0, math.inf, math.nan, "1", None, _MyInt(0)])
def test_validate_request_refuses_with_rule_3_9(n: object) -> None:
    err = validate_request(n)
    assert isinstance(err, BadRequestError)
    assert "3.9" in str(err)


def test_error_collector_terminates_once_and_late_errors_go_to_the_hook() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    ts.on_subscribe(_NoopSubscription())
    errors = ErrorCollector()
    first = ValueError("first")
    errors.add(first)
    errors.terminate_into(ts)
    errors.terminate_into(ts)  # exactly once
    with plugins.collect_errors() as late:
        assert not errors.add_or_report(KeyError("late"))
    ts.assert_failure(ValueError)
    assert ts.errors[0] is first
    assert [type(e) for e in late] == [KeyError]
    ts.assert_no_violations()


def test_half_serializer_delivers_an_error_raised_during_on_next_after_it() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    ts.on_subscribe(_NoopSubscription())
    hs = HalfSerializer(ts)

    # the error arrives while on_next is in progress: it goes out after on_next returns
    original = ts.on_next

    def on_next(x: int) -> None:
        original(x)
        hs.on_error(ValueError("during"))

    ts.on_next = on_next  # type: ignore[method-assign, assignment]
    hs.on_next(1)
    hs.on_next(2)  # after the terminal: dropped
    with plugins.collect_errors() as late:
        hs.on_error(KeyError("late"))
    ts.assert_values(1).assert_error(ValueError)
    assert [type(e) for e in late] == [KeyError]
    ts.assert_no_violations()


class _NoopSubscription:
    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass


# ---------------------------------------------------------------------------------------------
# Plugins


def test_raising_handler_does_not_break_the_caller_and_the_error_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def bad(_: BaseException) -> None:
        raise RuntimeError("handler broke")

    plugins.set_error_handler(bad)
    with caplog.at_level("ERROR", logger="rstreams"):
        plugins.on_error(ValueError("lost?"))
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "lost?" in text and "handler broke" in text


def test_collect_errors_from_many_threads_loses_nothing() -> None:
    with plugins.collect_errors() as errors:

        def report(k: int) -> None:
            for _ in range(100):
                plugins.on_error(ValueError(k))

        threads = [threading.Thread(target=report, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT)
    assert len(errors) == 400


@pytest.mark.parametrize(
    "error",
    [
        UndeliverableError(ValueError("v"), "after cancel"),
        OnErrorNotImplementedError(KeyError("k")),
        RetryExhaustedError(3, OSError("o")),
        ProtocolViolationError("1.9", "x"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_survive_pickle_and_copy(error: BaseException) -> None:
    """Regression: UndeliverableError, OnErrorNotImplementedError and RetryExhaustedError could not be
    pickled or copied (process pools, Spark executors): their constructors were fed the message."""
    error.add_note("a note")
    for clone in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(clone) is type(error)
        assert str(clone) == str(error)
        assert type(clone.__cause__) is type(error.__cause__)
        assert clone.__notes__ == ["a note"]


@pytest.mark.parametrize("bad", [None, "text"])
def test_plugins_on_error_never_raises_even_for_a_non_exception(bad: Any) -> None:
    """Regression: on_error("text") raised TypeError from setting __cause__ (the hook must never raise)."""
    with plugins.collect_errors() as errors:
        plugins.on_error(bad)
    assert len(errors) == 1 and isinstance(errors[0], TypeError)
    assert "rule 2.13" in str(errors[0])


def test_set_error_handler_refuses_a_non_callable() -> None:
    """Regression: set_error_handler(5) was accepted; every later error then hit a TypeError."""
    with pytest.raises(TypeError, match="callable"):
        plugins.set_error_handler(5)  # type: ignore[arg-type]
    assert not isinstance(plugins.get_error_handler(), int)
