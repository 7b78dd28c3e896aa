"""The sources (create, generate, using, from_future, the basic sources) and of the
backpressure operators against RxJava 3 and the Reactive Streams rules.

Each test pins a bug that was found and fixed here (it failed before the fix); a few companions
(named so) check that the legitimate behaviour next to the fix is kept.
"""

from __future__ import annotations

import concurrent.futures
import enum
import threading
from typing import Any

import pytest

from rstreams import BackpressureStrategy, Flowable
from rstreams.processors import PublishProcessor
from rstreams.testing import TestSubscriber

B = BackpressureStrategy


class _Two(enum.IntEnum):
    TWO = 2


class _CancelAfterFirst(TestSubscriber[Any]):
    """Cancels its subscription from inside the first on_next."""

    def on_next(self, item: Any) -> None:
        super().on_next(item)
        self.cancel()


# ---------------------------------------------------------------------------------------------
# generate


def test_generate_cancel_in_on_next_then_on_complete_in_same_call_is_not_delivered() -> None:
    """Rule 3.13 / 1.8: the generator emits and completes in one call; the subscriber cancels from
    on_next: the completion must not reach it (the emitter dropped the downstream on cancel)."""
    disposed: list[int] = []

    def step(s: int, e: Any) -> int:
        e.on_next(s)
        e.on_complete()
        return s + 1

    ts = _CancelAfterFirst()
    Flowable.generate(lambda: 0, step, disposed.append).subscribe(ts)
    ts.assert_values(0).assert_not_complete().assert_no_errors()
    assert disposed == [1]  # the state the generator returned, disposed once
    ts.assert_no_violations()


def test_generate_on_error_after_cancel_in_same_call_goes_to_hook(undeliverable: list[BaseException]) -> None:
    """An error the generator signals after the subscriber cancelled (from on_next) is not lost:
    it goes to the undeliverable-error hook, never to the cancelled subscriber."""

    def step(s: int, e: Any) -> int:
        e.on_next(s)
        e.on_error(KeyError("late"))
        return s + 1

    ts = _CancelAfterFirst()
    Flowable.generate(lambda: 0, step).subscribe(ts)
    ts.assert_values(0).assert_no_errors().assert_not_complete()
    assert [type(x) for x in undeliverable] == [KeyError]
    ts.assert_no_violations()


def test_generate_emitter_on_error_with_a_non_exception_is_a_type_error() -> None:
    """Rule 2.13: emitter.on_error("text") must not hand a str to the subscriber's on_error."""

    def step(s: int, e: Any) -> int:
        e.on_error("not an exception")
        return s

    ts: TestSubscriber[Any] = TestSubscriber()
    Flowable.generate(lambda: 0, step).subscribe(ts)
    ts.assert_error(TypeError).assert_no_values()
    assert "expects an exception" in str(ts.errors[0])
    ts.assert_no_violations()


# ---------------------------------------------------------------------------------------------
# create


@pytest.mark.parametrize("bad", ["not an exception", ValueError])
def test_create_emitter_on_error_with_a_non_exception_is_a_type_error(bad: Any) -> None:
    """Rule 2.13: a str or an exception class given to emitter.on_error becomes a TypeError."""

    def push(e: Any) -> None:
        e.on_next(1)
        e.on_error(bad)

    ts: TestSubscriber[Any] = TestSubscriber()
    Flowable.create(push, B.BUFFER).subscribe(ts)
    ts.assert_values(1).assert_error(TypeError)
    ts.assert_no_violations()


def test_create_try_on_error_with_a_non_exception_is_a_type_error() -> None:
    box: dict[str, bool] = {}

    def push(e: Any) -> None:
        box["ok"] = e.try_on_error(42)

    ts: TestSubscriber[Any] = TestSubscriber()
    Flowable.create(push, B.DROP).subscribe(ts)
    assert box["ok"] is True
    ts.assert_error(TypeError).assert_no_values()
    ts.assert_no_violations()


# ---------------------------------------------------------------------------------------------
# error / range


@pytest.mark.parametrize("made", [lambda: "oops", lambda: ValueError])
def test_error_supplier_returning_a_non_exception_signals_type_error(made: Any) -> None:
    """Flowable.error(supplier): a supplier that returns a str (or an exception class) must not
    produce on_error(<str>) (rule 2.13); the subscriber gets a TypeError naming the problem."""
    ts: TestSubscriber[Any] = TestSubscriber()
    Flowable.error(made).subscribe(ts)
    ts.assert_error(TypeError).assert_no_values()
    assert "not an exception" in str(ts.errors[0])
    ts.assert_no_violations()


def test_error_with_exception_class_instantiates_it() -> None:
    ts: TestSubscriber[Any] = TestSubscriber()
    Flowable.error(ValueError).subscribe(ts)  # the class is the supplier: ValueError()
    ts.assert_error(ValueError).assert_no_violations()


def test_range_rejects_a_bool_start() -> None:
    with pytest.raises(TypeError, match="takes ints"):
        Flowable.range(True, 2)
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.range(1, 2).subscribe(ts)
    ts.assert_result(1, 2).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# from_future


def test_from_future_nan_timeout_is_rejected() -> None:
    """A NaN timeout used to time out at once ("within nan s"); it is a bad argument."""
    with pytest.raises(ValueError, match="timeout must be >= 0"):
        Flowable.from_future(concurrent.futures.Future(), float("nan"))


@pytest.mark.parametrize("timeout", [float("inf"), 1e12, 10**30])
def test_from_future_huge_timeout_means_no_timeout(timeout: float) -> None:
    """threading.Timer(inf) dies of OverflowError in its thread; the value must still arrive."""
    crashed: list[BaseException] = []
    old_hook = threading.excepthook
    threading.excepthook = lambda args: crashed.append(args.exc_value)  # type: ignore[assignment]
    try:
        fut: concurrent.futures.Future[int] = concurrent.futures.Future()
        ts: TestSubscriber[int] = TestSubscriber()
        Flowable.from_future(fut, timeout).subscribe(ts)
        assert not any(t.name == "rstreams-from_future-timeout" for t in threading.enumerate())
        fut.set_result(5)
        ts.await_done(2).assert_result(5)
    finally:
        threading.excepthook = old_hook
    assert crashed == []
    ts.assert_no_violations()


# ---------------------------------------------------------------------------------------------
# using


class _NonePublisher:
    """A foreign Publisher that breaks rule 2.13 (emits None), then completes."""

    def __init__(self) -> None:
        self.cancelled = False

    def subscribe(self, s: Any) -> None:
        outer = self

        class _Sub:
            def request(self, n: int) -> None:
                pass

            def cancel(self) -> None:
                outer.cancelled = True

        s.on_subscribe(_Sub())
        try:
            s.on_next(None)
        except TypeError:
            pass  # rule 2.13: the subscriber raises to the offending publisher
        s.on_complete()


@pytest.mark.parametrize("eager", [True, False])
def test_using_guards_a_foreign_publisher_against_none(eager: bool) -> None:
    """using(): a foreign Publisher from source_fn gets the rule 2.13 guard (as defer does): the
    None never reaches the subscriber, the stream fails with a TypeError, the resource is disposed."""
    pub = _NonePublisher()
    disposed: list[str] = []
    ts: TestSubscriber[Any] = TestSubscriber()
    Flowable.using(lambda: "res", lambda r: pub, disposed.append, eager).subscribe(ts)
    ts.assert_no_values().assert_error(TypeError).assert_not_complete()
    assert disposed == ["res"]
    assert pub.cancelled
    ts.assert_no_violations()


# ---------------------------------------------------------------------------------------------
# on_backpressure_drop


def test_drop_request_with_an_int_subclass_is_demand() -> None:
    """request(IntEnum.TWO) is a legal request of 2 (validate_request accepts int subclasses): it
    used to be forwarded to the upstream (already unbounded) and lost, so nothing was emitted."""
    p: PublishProcessor[int] = PublishProcessor()
    ts: TestSubscriber[int] = TestSubscriber(0)
    p.on_backpressure_drop().subscribe(ts)
    ts.request(_Two.TWO)
    for i in range(5):
        p.on_next(i)
    p.on_complete()
    ts.assert_result(0, 1).assert_no_violations()


def test_drop_bad_request_is_still_an_error() -> None:
    p: PublishProcessor[int] = PublishProcessor()
    ts: TestSubscriber[int] = TestSubscriber(0)
    p.on_backpressure_drop().subscribe(ts)
    ts.request(0)
    ts.assert_error(ValueError).assert_no_values().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# async functions given where a plain function is called synchronously


async def _async_step(s: int, e: Any) -> int:
    e.on_next(s)
    return s + 1


async def _async_push(e: Any) -> None:
    e.on_next(1)
    e.on_complete()


async def _async_value() -> int:
    return 1


@pytest.mark.parametrize(
    "make",
    [
        lambda: Flowable.generate(lambda: 0, _async_step),  # spun forever without emitting
        lambda: Flowable.create(_async_push),  # hung: the coroutine never ran
        lambda: Flowable.from_callable(_async_value),  # emitted a coroutine object
        lambda: Flowable.defer(_async_value),
        lambda: Flowable.using(lambda: 1, lambda r: Flowable.just(r), _async_push),
        lambda: Flowable.just(1).on_backpressure_drop(_async_push),
        lambda: Flowable.just(1).on_backpressure_buffer(4, on_dropped=_async_push),
    ],
)
def test_async_functions_are_rejected_at_assembly(make: Any) -> None:
    with pytest.raises(TypeError, match="is an async function"):
        make()
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.from_callable(lambda: 1).subscribe(ts)  # companion: plain functions still work
    ts.assert_result(1).assert_no_violations()


def test_create_emitter_fn_returning_a_coroutine_fails_the_stream() -> None:
    """A lambda wrapping an async function is not detected at assembly; its coroutine is: the
    stream fails with a TypeError instead of waiting forever."""
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.create(lambda e: _async_push(e)).subscribe(ts)
    ts.assert_error(TypeError).assert_no_values()
    assert "coroutine" in str(ts.errors[0])
    ts.assert_no_violations()


def test_create_set_cancellable_with_an_async_function_fails_the_stream() -> None:
    async def cleanup() -> None:
        pass

    def push(e: Any) -> None:
        e.set_cancellable(cleanup)

    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.create(push).subscribe(ts)
    ts.assert_error(TypeError).assert_no_values().assert_no_violations()


def _gen_step(s: int, e: Any) -> Any:
    e.on_next(s)
    yield s + 1


def _gen_push(e: Any) -> Any:
    e.on_next(1)
    yield


@pytest.mark.parametrize(
    "make",
    [
        lambda: Flowable.generate(lambda: 0, _gen_step),  # spun forever: the body never ran
        lambda: Flowable.generate(lambda: 0, lambda s, e: s, _gen_push),  # dispose never ran
        lambda: Flowable.create(_gen_push),  # hung
        lambda: Flowable.using(lambda: 1, lambda r: Flowable.just(r), _gen_push),
        lambda: Flowable.just(1).on_backpressure_drop(_gen_push),
        lambda: Flowable.just(1).on_backpressure_buffer(4, on_dropped=_gen_push),
    ],
)
def test_generator_functions_whose_body_must_run_are_rejected(make: Any) -> None:
    with pytest.raises(TypeError, match="is a generator function"):
        make()


def test_generator_function_as_generate_state_is_still_allowed() -> None:
    """Companion: a generator is a legitimate state (or resource); only the step is checked."""

    def states() -> Any:
        yield from (10, 20)

    def step(it: Any, e: Any) -> Any:
        x = next(it, None)
        if x is None:
            e.on_complete()
        else:
            e.on_next(x)
        return it

    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.generate(states, step).subscribe(ts)
    ts.assert_result(10, 20).assert_no_violations()


def test_create_emitter_fn_returning_a_generator_fails_the_stream() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.create(lambda e: _gen_push(e)).subscribe(ts)
    ts.assert_error(TypeError).assert_no_values().assert_no_violations()


def test_create_set_disposable_disposes_on_cancel_and_on_completion() -> None:
    """RxJava's FlowableEmitter.setDisposable was missing (AttributeError in emitter_fn)."""
    inner: list[Any] = []

    def push(e: Any) -> None:
        d = Flowable.never().subscribe(lambda x: None)  # a Disposable
        inner.append(d)
        e.set_disposable(d)
        e.on_next(1)

    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.create(push).subscribe(ts)
    ts.assert_values(1).assert_not_complete()
    assert not inner[0].is_disposed
    ts.cancel()
    assert inner[0].is_disposed
    ts.assert_no_violations()

    def push_and_complete(e: Any) -> None:
        d = Flowable.never().subscribe(lambda x: None)
        inner.append(d)
        e.set_disposable(d)
        e.on_complete()

    ts2: TestSubscriber[int] = TestSubscriber()
    Flowable.create(push_and_complete).subscribe(ts2)
    ts2.assert_result()
    assert inner[1].is_disposed
    ts2.assert_no_violations()

    ts3: TestSubscriber[int] = TestSubscriber()
    Flowable.create(lambda e: e.set_disposable(42)).subscribe(ts3)  # not a Disposable
    ts3.assert_error(TypeError).assert_no_values()
    assert "expected a Disposable" in str(ts3.errors[0])
    ts3.assert_no_violations()
