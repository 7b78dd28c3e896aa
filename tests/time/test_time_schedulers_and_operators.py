"""The time operators, the time sources and the Scheduler contract against RxJava 3's
documented semantics and the Reactive Streams rules (virtual time; no timed assertions).

Every operator test subscribes a ``TestSubscriber`` and ends with ``assert_no_violations()``.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import math
import threading
from collections.abc import Callable
from typing import Any

import pytest

from rstreams import Flowable, schedulers
from rstreams.errors import MissingBackpressureError
from rstreams.retry import Retry, RetryExhaustedError
from rstreams.schedulers import Scheduler, Worker
from rstreams.testing import TestPublisher, TestScheduler, TestSubscriber
from spec._helpers import _src

_var: contextvars.ContextVar[str] = contextvars.ContextVar("_time_test_var", default="unset")


def _in_context(value: str, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` in a copy of the current context where ``_var`` is ``value``."""

    def run() -> Any:
        _var.set(value)
        return fn()

    return contextvars.copy_context().run(run)


# =============================================================================================
# The Scheduler / Worker contract
# =============================================================================================


def test_test_scheduler_decimal_periods_add_up_exactly() -> None:
    # RxJava's TestScheduler counts nanoseconds: three ticks of 0.1 s are due by 0.3 s
    ts = TestScheduler()
    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.interval(0.1, scheduler=ts).subscribe(sub)
    ts.advance_by(0.3)
    sub.assert_values(0, 1, 2)
    for _ in range(7):
        ts.advance_by(0.1)
    sub.assert_values(*range(10)).assert_no_violations()
    assert ts.now() == 1.0
    sub.cancel()


def test_test_scheduler_decimal_delays_and_timestamps_are_exact() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub: TestSubscriber[Any] = TestSubscriber()
    Flowable.from_publisher(tp).delay(0.1, ts).timestamp(ts).subscribe(sub)
    tp.next(1)
    ts.advance_by(0.05)
    ts.advance_by(0.05)  # 0.05 + 0.05 reaches 0.1 exactly
    tp.next(2)
    ts.advance_by(0.1)
    tp.complete()
    ts.advance_by(0.1)
    assert [(t.value, t.time) for t in sub.values] == [(1, 0.1), (2, 0.2)]
    sub.assert_complete().assert_no_violations()


def test_test_scheduler_same_time_tasks_run_fifo_including_tasks_added_while_advancing() -> None:
    ts = TestScheduler()
    w1, w2 = ts.create_worker(), ts.create_worker()
    out: list[str] = []
    w1.schedule(lambda: (out.append("a"), w2.schedule(lambda: out.append("d"), 0)), 1)
    w2.schedule(lambda: out.append("b"), 1)
    w1.schedule(lambda: out.append("c"), 1)
    ts.advance_by(1)
    assert out == ["a", "b", "c", "d"]  # d was due at 1 too, submitted last
    ts.advance_by(5)
    assert out == ["a", "b", "c", "d"]


@pytest.mark.parametrize("name", ["test", "trampoline", "single", "computation", "from_executor"])
def test_a_task_handle_is_disposed_once_its_task_ran(name: str) -> None:
    # RxJava: the Disposable of a scheduled task reports isDisposed() after the task ran
    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="time-test-exec")
    ts = TestScheduler()
    s: Scheduler = {
        "test": ts,
        "trampoline": schedulers.trampoline(),
        "single": schedulers.single(),
        "computation": schedulers.computation(),
        "from_executor": schedulers.from_executor(pool),
    }[name]
    try:
        w = s.create_worker()
        ran = threading.Event()
        h = w.schedule(ran.set)
        later = None if name == "trampoline" else w.schedule(lambda: None, 60)  # trampoline: blocks
        ts.trigger_actions()
        assert ran.wait(10)
        done = threading.Event()
        w.schedule(done.set)  # the worker is serial: the first task's bookkeeping is over by then
        ts.trigger_actions()
        assert done.wait(10)
        assert h.is_disposed
        assert later is None or not later.is_disposed
        w.dispose()
    finally:
        pool.shutdown(wait=True)


def test_test_scheduler_worker_dispose_cancels_only_its_pending_tasks() -> None:
    ts = TestScheduler()
    w1, w2 = ts.create_worker(), ts.create_worker()
    out: list[int] = []
    w1.schedule(lambda: out.append(1), 1)
    w2.schedule(lambda: out.append(2), 1)
    h = w2.schedule(lambda: out.append(3), 2)
    w1.dispose()
    h.dispose()
    assert ts.pending == 1
    assert w1.schedule(lambda: out.append(4)).is_disposed
    ts.advance_by(5)
    assert out == [2]
    assert ts.pending == 0


def test_test_scheduler_restores_contextvars_captured_at_worker_creation() -> None:
    ts = TestScheduler()
    w = _in_context("subscriber", ts.create_worker)
    seen: list[str] = []
    token = _var.set("advancer")
    try:
        w.schedule(lambda: (seen.append(_var.get()), w.schedule(lambda: seen.append(_var.get()))), 1)
        ts.advance_by(1)  # the nested task (same worker, same context) runs in this advance too
    finally:
        _var.reset(token)
    assert seen == ["subscriber", "subscriber"]


def test_test_scheduler_contextvars_reach_a_time_operator_subscribed_in_context() -> None:
    ts = TestScheduler()
    seen: list[str] = []
    sub: TestSubscriber[int] = TestSubscriber()
    _in_context(
        "request-42",
        lambda: Flowable.just(1, 2).delay(1, ts).do_on_next(lambda _: seen.append(_var.get())).subscribe(sub),
    )
    ts.advance_by(1)
    sub.assert_result(1, 2).assert_no_violations()
    assert seen == ["request-42", "request-42"]


def test_test_scheduler_periodic_in_virtual_time_and_infinite_delay() -> None:
    ts = TestScheduler()
    w = ts.create_worker()
    ticks: list[float] = []
    h = w.schedule_periodic(lambda: ticks.append(ts.now()), 0.25, 0.5)
    never = w.schedule(lambda: ticks.append(-1.0), math.inf)  # never falls due
    ts.advance_by(1.75)
    assert ticks == [0.25, 0.75, 1.25, 1.75]
    h.dispose()
    ts.advance_by(100)
    assert ticks == [0.25, 0.75, 1.25, 1.75]
    never.dispose()
    assert ts.pending == 0


def test_periodic_handle_dispose_drops_the_pending_run_at_once() -> None:
    ts = TestScheduler()
    w = ts.create_worker()
    ticks: list[float] = []
    h = w.schedule_periodic(lambda: ticks.append(ts.now()), 1, 1)
    ts.advance_by(2.5)
    assert ticks == [1.0, 2.0] and ts.pending == 1
    h.dispose()
    assert h.is_disposed and ts.pending == 0  # nothing of it is left waiting on the worker
    ts.advance_by(5)
    assert ticks == [1.0, 2.0]


@pytest.mark.parametrize("name", ["immediate", "trampoline"])
def test_caller_thread_workers_restore_contextvars_captured_at_creation(name: str) -> None:
    s: Scheduler = getattr(schedulers, name)()
    w = _in_context("creator", s.create_worker)
    seen: list[str] = []
    w.schedule(lambda: (seen.append(_var.get()), w.schedule(lambda: seen.append(_var.get()))))
    assert seen == ["creator", "creator"]
    w.dispose()


@pytest.mark.parametrize("name", ["immediate", "trampoline"])
def test_periodic_on_caller_thread_workers_does_not_grow_the_stack(name: str) -> None:
    # interval on immediate() re-scheduled each tick from inside the previous one: RecursionError
    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.interval(1e-6, scheduler=getattr(schedulers, name)()).take(3000).subscribe(sub)
    sub.assert_value_count(3000).assert_complete().assert_no_violations()


def test_trampoline_runs_queued_tasks_in_due_time_order_fifo_for_equal_times() -> None:
    w = schedulers.trampoline().create_worker()
    out: list[str] = []

    def first() -> None:
        out.append("first")
        w.schedule(lambda: out.append("late"), 0.02)
        w.schedule(lambda: out.append("soon"), 0.01)
        w.schedule(lambda: out.append("now-1"))
        w.schedule(lambda: out.append("now-2"))

    w.schedule(first)
    assert out == ["first", "now-1", "now-2", "soon", "late"]


def test_executor_worker_keeps_delayed_tasks_in_order() -> None:
    # from_executor waits for delayed tasks on timer threads; equal delays must not be reordered
    pool = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="time-test-exec")
    try:
        w = schedulers.from_executor(pool).create_worker()
        out: list[int] = []
        done = threading.Event()
        for i in range(300):
            w.schedule(lambda i=i: out.append(i), 0.005)
        w.schedule(done.set, 0.005)  # due last (scheduled last): runs after all of them
        assert done.wait(10)
        w.dispose()
        assert out == list(range(300))
    finally:
        pool.shutdown(wait=True)


def test_delay_on_from_executor_keeps_elements_in_order() -> None:
    pool = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="time-test-exec")
    try:
        sub: TestSubscriber[int] = TestSubscriber()
        Flowable.range(0, 1000).delay(0.001, schedulers.from_executor(pool)).subscribe(sub)
        sub.await_done(10).assert_result(*range(1000)).assert_no_violations()
    finally:
        pool.shutdown(wait=True)


def test_executor_worker_delayed_tasks_survive_a_shutdown_of_the_timer_scheduler() -> None:
    from rstreams.schedulers._local import ExecutorScheduler
    from rstreams.schedulers._threads import ComputationScheduler

    pool = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="time-test-exec")
    timers = ComputationScheduler(1, name="time-test-timers")  # private: the shared ones stay up
    try:
        w = ExecutorScheduler(pool, timers).create_worker()
        first, second = threading.Event(), threading.Event()
        w.schedule(first.set, 0.001)
        assert first.wait(10)
        timers.shutdown()  # its threads stop (they restart on next use)
        w.schedule(second.set, 0.001)
        assert second.wait(10)
        w.dispose()
    finally:
        timers.shutdown()
        pool.shutdown(wait=True)


def test_executor_worker_dispose_drops_its_delayed_tasks() -> None:
    pool = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="time-test-exec")
    try:
        s = schedulers.from_executor(pool)
        w = s.create_worker()
        out: list[int] = []
        w.schedule(lambda: out.append(1), 0.02)
        timers = w._timers.get()  # type: ignore[attr-defined]
        w.dispose()
        assert timers.is_disposed  # the pending delayed task is gone with it
        other = s.create_worker()
        done = threading.Event()
        other.schedule(done.set, 0.05)
        assert done.wait(10)
        other.dispose()
        assert out == []
    finally:
        pool.shutdown(wait=True)


@pytest.mark.parametrize("name", ["single", "new_thread", "computation", "io"])
def test_loop_worker_survives_a_delay_beyond_the_platform_timeout(name: str) -> None:
    # a timer(1e12) used to kill the loop thread (Lock.acquire OverflowError), and every worker on it
    s: Scheduler = getattr(schedulers, name)()
    w = s.create_worker()
    far = w.schedule(lambda: None, 1e12)
    never = w.schedule(lambda: None, math.inf)
    done = threading.Event()
    w.schedule(done.set, 0.01)
    assert done.wait(10)
    again = threading.Event()  # the loop went back to sleep until the far task: still alive?
    w.schedule(again.set, 0.01)
    assert again.wait(10)
    far.dispose()
    never.dispose()
    w.dispose()


def test_schedule_direct_dispose_before_running_ends_its_worker_thread() -> None:
    before = set(threading.enumerate())
    handles = [schedulers.new_thread().schedule_direct(lambda: None, 60) for _ in range(3)]
    for h in handles:
        h.dispose()
        assert h.is_disposed
    started = [
        t for t in threading.enumerate() if t not in before and t.name.startswith("rstreams-new-thread")
    ]
    for t in started:
        t.join(10)
    assert not any(t.is_alive() for t in started)  # no thread leaks for a task that never runs


@pytest.mark.parametrize("name", ["test", "trampoline", "single", "from_executor"])
def test_a_nan_delay_runs_as_soon_as_possible_and_breaks_nothing(name: str) -> None:
    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="time-test-exec")
    ts = TestScheduler()
    s: Scheduler = {
        "test": ts,
        "trampoline": schedulers.trampoline(),
        "single": schedulers.single(),
        "from_executor": schedulers.from_executor(pool),
    }[name]
    try:
        w = s.create_worker()
        first, second = threading.Event(), threading.Event()
        w.schedule(first.set, math.nan)
        w.schedule(second.set, 0.001)
        ts.advance_by(0.001)
        assert first.wait(10) and second.wait(10)
        w.dispose()
    finally:
        pool.shutdown(wait=True)


def test_loop_worker_forgets_a_disposed_timed_task_at_once() -> None:
    # debounce disposes one timer per element: the worker must not keep every disposed handle
    w = schedulers.single().create_worker()
    for _ in range(100):
        w.schedule(lambda: None, 60).dispose()
    assert len(w._handles) == 0  # type: ignore[attr-defined]
    w.dispose()


def test_worker_tasks_never_overlap_and_keep_order_with_delays() -> None:
    w: Worker = schedulers.computation().create_worker()
    active = [0]
    overlaps: list[int] = []
    order: list[int] = []
    done = threading.Event()

    def task(i: int) -> None:
        active[0] += 1
        if active[0] > 1:
            overlaps.append(i)
        order.append(i)
        active[0] -= 1

    for i in range(100):
        w.schedule(lambda i=i: task(i), 0.002)
    w.schedule(done.set, 0.002)  # due last (scheduled last): runs after all of them
    assert done.wait(10)
    w.dispose()
    assert not overlaps and order == list(range(100))


# =============================================================================================
# interval and timer
# =============================================================================================


def test_interval_one_request_at_a_time_then_missing_backpressure_when_lagging() -> None:
    ts = TestScheduler()
    sub: TestSubscriber[int] = TestSubscriber(1)
    Flowable.interval(1, scheduler=ts).subscribe(sub)
    ts.advance_by(1)
    sub.request(1)
    ts.advance_by(1)
    sub.request(1)
    ts.advance_by(1)
    sub.assert_values(0, 1, 2).assert_no_errors()
    ts.advance_by(1)  # tick 3 finds no demand: RxJava's MissingBackpressureException
    sub.assert_values(0, 1, 2).assert_error(MissingBackpressureError, match="interval").assert_no_violations()
    assert ts.pending == 0
    ts.advance_by(10)
    sub.assert_value_count(3)


def test_interval_initial_delay_zero_ticks_at_subscription_time() -> None:
    ts = TestScheduler()
    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.interval(1, 0, scheduler=ts).take(3).subscribe(sub)
    ts.trigger_actions()
    sub.assert_values(0)
    ts.advance_by(2)
    sub.assert_result(0, 1, 2).assert_no_violations()
    assert ts.pending == 0


def test_timer_emits_zero_then_completes_and_waits_for_demand() -> None:
    ts = TestScheduler()
    sub: TestSubscriber[int] = TestSubscriber(0)
    Flowable.timer(2, ts).subscribe(sub)
    ts.advance_by(2)
    sub.assert_no_values().assert_not_terminated()  # documented: the 0 waits for a request
    sub.request(1)
    sub.assert_result(0).assert_no_violations()
    assert ts.pending == 0


# =============================================================================================
# delay, delay_subscription
# =============================================================================================


def test_delay_shifts_elements_and_completion_by_the_delay() -> None:
    ts, tp, sub = _src(lambda f, s: f.delay(1, s).timestamp(s))
    tp.next(1)
    ts.advance_by(0.5)
    tp.next(2)
    tp.complete()
    ts.advance_by(0.5)
    sub.assert_not_complete()
    ts.advance_by(0.5)
    assert [(t.value, t.time) for t in sub.values] == [(1, 1.0), (2, 1.5)]
    sub.assert_complete().assert_no_violations()  # on_complete shifted too (at 1.5)


def test_delay_error_is_not_delayed_and_drops_pending_elements() -> None:
    ts, tp, sub = _src(lambda f, s: f.delay(1, s))
    tp.next(1)
    tp.error(KeyError("k"))
    ts.trigger_actions()
    sub.assert_no_values().assert_error(KeyError).assert_no_violations()
    ts.advance_by(2)
    sub.assert_no_values()
    assert ts.pending == 0


def test_delay_error_true_shifts_the_error_after_the_elements() -> None:
    ts, tp, sub = _src(lambda f, s: f.delay(1, s, delay_error=True))
    tp.next(1)
    tp.error(KeyError("k"))
    ts.advance_by(0.99)
    sub.assert_empty()
    ts.advance_by(0.01)
    sub.assert_values(1).assert_error(KeyError).assert_no_violations()


def test_delay_one_request_at_a_time() -> None:
    ts, tp, sub = _src(lambda f, s: f.delay(1, s), request=1)
    assert tp.requested == 1
    tp.next(1)
    ts.advance_by(1)
    sub.assert_values(1)
    sub.request(1)
    tp.next(2)
    tp.complete()
    ts.advance_by(1)
    sub.assert_result(1, 2).assert_no_violations()


def test_delay_subscription_subscribes_after_the_delay_with_earlier_requests() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_publisher(tp).delay_subscription(2, ts).subscribe(sub)
    sub.request(2)
    ts.advance_by(1.5)
    tp.assert_was_not_subscribed()
    ts.advance_by(0.5)
    tp.assert_was_subscribed()
    assert tp.requested == 2
    tp.next(1, 2)
    tp.complete()
    sub.assert_result(1, 2).assert_no_violations()


# =============================================================================================
# debounce
# =============================================================================================


def test_debounce_emits_the_last_item_after_a_quiet_period() -> None:
    ts, tp, sub = _src(lambda f, s: f.debounce(1, s).timestamp(s))
    tp.next(1)
    ts.advance_by(0.5)
    tp.next(2)
    ts.advance_by(0.5)
    tp.next(3)
    ts.advance_by(1)
    tp.next(4)
    ts.advance_by(2)
    assert [(t.value, t.time) for t in sub.values] == [(3, 2.0), (4, 3.0)]
    sub.assert_not_complete().assert_no_violations()


def test_debounce_complete_after_the_item_was_emitted_does_not_repeat_it() -> None:
    ts, tp, sub = _src(lambda f, s: f.debounce(1, s))
    tp.next(1)
    ts.advance_by(1)
    tp.complete()
    sub.assert_result(1).assert_no_violations()


def test_sample_does_not_repeat_an_item_at_a_later_tick() -> None:
    ts, tp, sub = _src(lambda f, s: f.sample(1, s))
    tp.next(1)
    ts.advance_by(3)
    tp.next(2)
    ts.advance_by(1)
    sub.assert_values(1, 2).assert_no_violations()
    sub.cancel()


def test_timer_cancel_before_firing_emits_nothing_and_frees_the_timer() -> None:
    ts = TestScheduler()
    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.timer(1, ts).subscribe(sub)
    sub.cancel()
    assert ts.pending == 0
    ts.advance_by(2)
    sub.assert_empty().assert_no_violations()


def test_debounce_complete_flushes_the_pending_item_at_once() -> None:
    ts, tp, sub = _src(lambda f, s: f.debounce(1, s))
    tp.next(1, 2)
    tp.complete()
    sub.assert_result(2).assert_no_violations()
    assert ts.pending == 0


def test_debounce_error_drops_the_pending_item() -> None:
    ts, tp, sub = _src(lambda f, s: f.debounce(1, s))
    tp.next(1)
    tp.error(KeyError("k"))
    ts.advance_by(2)
    sub.assert_no_values().assert_error(KeyError).assert_no_violations()


def test_debounce_one_request_at_a_time_and_missing_backpressure_without_demand() -> None:
    ts, tp, sub = _src(lambda f, s: f.debounce(1, s), request=1)
    tp.next(1)
    ts.advance_by(1)
    sub.assert_values(1)
    sub.request(1)
    tp.next(2)
    ts.advance_by(1)
    sub.assert_values(1, 2)
    tp.next(3)
    ts.advance_by(1)  # due without demand: RxJava signals MissingBackpressureException
    sub.assert_values(1, 2).assert_error(MissingBackpressureError, match="debounce").assert_no_violations()
    assert tp.was_cancelled


def test_debounce_complete_without_demand_signals_missing_backpressure() -> None:
    ts, tp, sub = _src(lambda f, s: f.debounce(1, s), request=0)
    tp.next(1)
    tp.complete()
    sub.assert_no_values().assert_error(MissingBackpressureError).assert_no_violations()


# =============================================================================================
# sample / throttle_last, throttle_first, throttle_latest
# =============================================================================================


@pytest.mark.parametrize("op", ["sample", "throttle_last"])
def test_sample_emits_the_latest_of_each_period_and_drops_the_last_by_default(op: str) -> None:
    ts, tp, sub = _src(lambda f, s: getattr(f, op)(1, s))
    tp.next(1, 2)
    ts.advance_by(1)
    ts.advance_by(1)  # an empty period emits nothing
    tp.next(3)
    tp.complete()
    sub.assert_result(2).assert_no_violations()
    assert ts.pending == 0


def test_sample_emit_last_emits_the_unsampled_item_at_completion() -> None:
    ts, tp, sub = _src(lambda f, s: f.sample(1, s, emit_last=True))
    tp.next(1, 2)
    ts.advance_by(1)
    tp.next(3)
    tp.complete()
    sub.assert_result(2, 3).assert_no_violations()


def test_sample_emit_last_does_not_repeat_an_already_sampled_item() -> None:
    ts, tp, sub = _src(lambda f, s: f.sample(1, s, emit_last=True))
    tp.next(1)
    ts.advance_by(1)
    tp.complete()
    sub.assert_result(1).assert_no_violations()


def test_sample_tick_without_demand_signals_missing_backpressure() -> None:
    ts, tp, sub = _src(lambda f, s: f.sample(1, s), request=1)
    tp.next(1)
    ts.advance_by(1)
    tp.next(2)
    ts.advance_by(1)
    sub.assert_values(1).assert_error(MissingBackpressureError, match="sample").assert_no_violations()
    assert tp.was_cancelled and ts.pending == 0


def test_sample_error_drops_the_latest() -> None:
    ts, tp, sub = _src(lambda f, s: f.sample(1, s, emit_last=True))
    tp.next(1)
    tp.error(KeyError("k"))
    ts.advance_by(2)
    sub.assert_no_values().assert_error(KeyError).assert_no_violations()
    assert ts.pending == 0


def test_throttle_first_emits_the_first_of_each_window() -> None:
    ts, tp, sub = _src(lambda f, s: f.throttle_first(1, s))
    tp.next(1)
    ts.advance_by(0.5)
    tp.next(2)
    ts.advance_by(0.5)
    tp.next(3)  # the window [0, 1) is over
    ts.advance_by(0.9)
    tp.next(4)
    tp.complete()
    sub.assert_result(1, 3).assert_no_violations()
    assert ts.pending == 0


def test_throttle_first_without_demand_signals_missing_backpressure() -> None:
    ts, tp, sub = _src(lambda f, s: f.throttle_first(1, s), request=1)
    tp.next(1)
    ts.advance_by(0.5)
    tp.next(2)  # dropped by the window: no error
    sub.assert_values(1).assert_no_errors()
    ts.advance_by(0.5)
    tp.next(3)
    sub.assert_values(1).assert_error(MissingBackpressureError, match="throttle_first").assert_no_violations()


def test_throttle_latest_first_at_once_then_the_latest_per_window() -> None:
    ts, tp, sub = _src(lambda f, s: f.throttle_latest(1, s).timestamp(s))
    tp.next(1, 2, 3)
    ts.advance_by(1)
    ts.advance_by(1)  # a window with nothing new stops the timer
    tp.next(4)
    ts.advance_by(0.5)
    tp.next(5)
    tp.complete()  # 5 is dropped without emit_last
    assert [(t.value, t.time) for t in sub.values] == [(1, 0.0), (3, 1.0), (4, 2.0)]
    sub.assert_complete().assert_no_violations()
    assert ts.pending == 0


def test_throttle_latest_emit_last() -> None:
    ts, tp, sub = _src(lambda f, s: f.throttle_latest(1, s, emit_last=True))
    tp.next(1, 2, 3)
    tp.complete()
    sub.assert_result(1, 3).assert_no_violations()


def test_throttle_latest_window_end_without_demand_signals_missing_backpressure() -> None:
    ts, tp, sub = _src(lambda f, s: f.throttle_latest(1, s), request=1)
    tp.next(1, 2)
    ts.advance_by(1)
    sub.assert_values(1).assert_error(
        MissingBackpressureError, match="throttle_latest"
    ).assert_no_violations()
    assert tp.was_cancelled and ts.pending == 0


def test_window_timed_needs_demand_for_its_first_window_and_rule_3_9() -> None:
    # RxJava's window(time) emits its first window at subscription: without demand it fails
    ts, tp, sub = _src(lambda f, s: f.window_timed(1, scheduler=s), request=0)
    sub.assert_error(MissingBackpressureError, match="window_timed").assert_no_violations()
    assert tp.was_cancelled and ts.pending == 0
    ts, tp, sub = _src(lambda f, s: f.window_timed(1, scheduler=s), request=1)
    sub.assert_value_count(1)
    sub.request(0)
    sub.assert_value_count(1).assert_error(ValueError, match="3.9").assert_no_violations()


# =============================================================================================
# timeout, timeout_selector
# =============================================================================================


def test_timeout_per_item_rearms_after_each_element() -> None:
    ts, tp, sub = _src(lambda f, s: f.timeout(1, scheduler=s))
    ts.advance_by(0.9)
    tp.next(1)
    ts.advance_by(0.9)
    tp.next(2)
    ts.advance_by(0.99)
    sub.assert_values(1, 2).assert_no_errors()
    ts.advance_by(0.01)
    sub.assert_values(1, 2).assert_error(TimeoutError).assert_no_violations()
    assert tp.was_cancelled and ts.pending == 0


def test_timeout_fallback_gets_the_unfulfilled_demand() -> None:
    ts, tp, sub = _src(lambda f, s: f.timeout(1, Flowable.range(10, 5), s), request=3)
    tp.next(1)
    ts.advance_by(1)
    sub.assert_values(1, 10, 11).assert_not_complete()
    sub.request(10)
    sub.assert_result(1, 10, 11, 12, 13, 14).assert_no_violations()
    assert tp.was_cancelled


def test_timeout_does_not_fire_after_completion() -> None:
    ts, tp, sub = _src(lambda f, s: f.timeout(1, scheduler=s))
    tp.next(1)
    tp.complete()
    assert ts.pending == 0
    ts.advance_by(5)
    sub.assert_result(1).assert_no_violations()


def test_timeout_selector_first_and_per_item_timeouts() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.from_publisher(tp).timeout_selector(
        Flowable.timer(2, ts), lambda x: Flowable.timer(x, ts)
    ).subscribe(sub)
    ts.advance_by(1.9)
    tp.next(3)  # the next element must come within 3 s
    ts.advance_by(2.9)
    tp.next(1)  # ... then within 1 s
    ts.advance_by(0.99)
    sub.assert_values(3, 1).assert_no_errors()
    ts.advance_by(0.01)
    sub.assert_values(3, 1).assert_error(TimeoutError).assert_no_violations()
    assert tp.was_cancelled and ts.pending == 0


def test_timeout_selector_first_timeout_switches_to_the_fallback() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.from_publisher(tp).timeout_selector(
        Flowable.timer(1, ts), lambda x: Flowable.never(), Flowable.just(7, 8)
    ).subscribe(sub)
    ts.advance_by(1)
    sub.assert_result(7, 8).assert_no_violations()
    assert tp.was_cancelled


def test_timeout_selector_without_first_timeout_waits_forever_for_the_first() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.from_publisher(tp).timeout_selector(None, lambda x: Flowable.timer(1, ts)).subscribe(sub)
    ts.advance_by(100)
    sub.assert_empty()
    tp.next(1)
    ts.advance_by(1)
    sub.assert_values(1).assert_error(TimeoutError).assert_no_violations()


# =============================================================================================
# timestamp, time_interval
# =============================================================================================


def test_time_interval_measures_since_subscription_then_between_elements() -> None:
    ts = TestScheduler(start=10)
    tp: TestPublisher[int] = TestPublisher.create()
    sub: TestSubscriber[Any] = TestSubscriber(1)
    Flowable.from_publisher(tp).time_interval(ts).subscribe(sub)
    ts.advance_by(0.5)
    tp.next(1)
    sub.request(1)
    ts.advance_by(1.5)
    tp.next(2)
    tp.complete()
    assert [(t.value, t.time) for t in sub.values] == [(1, 0.5), (2, 1.5)]
    sub.assert_complete().assert_no_violations()


# =============================================================================================
# take_for / skip_for
# =============================================================================================


def test_take_for_relays_until_the_time_is_up_then_completes_and_cancels() -> None:
    ts, tp, sub = _src(lambda f, s: f.take_for(1, s))
    tp.next(1)
    ts.advance_by(0.999)
    tp.next(2)
    ts.advance_by(0.001)
    sub.assert_result(1, 2).assert_no_violations()
    assert tp.was_cancelled and ts.pending == 0


def test_take_via_seconds_keyword_is_take_for() -> None:
    ts, tp, sub = _src(lambda f, s: f.take(seconds=1, scheduler=s))
    tp.next(1)
    ts.advance_by(1)
    sub.assert_result(1).assert_no_violations()


def test_skip_for_drops_the_window_and_keeps_the_downstream_demand() -> None:
    ts, tp, sub = _src(lambda f, s: f.skip_for(1, s), request=2)
    tp.next(1, 2)  # dropped: each is replaced upstream
    ts.advance_by(1)
    tp.next(3, 4)
    tp.complete()
    sub.assert_result(3, 4).assert_no_violations()


# =============================================================================================
# buffer_timed, window_timed
# =============================================================================================


def test_buffer_timed_timespan_and_max_size_restarts_the_timer() -> None:
    ts, tp, sub = _src(lambda f, s: f.buffer_timed(1, 2, s))
    ts.advance_by(0.5)
    tp.next(1, 2)  # full at 0.5: the next list runs until 1.5
    tp.next(3)
    ts.advance_by(0.99)
    sub.assert_values([1, 2])
    ts.advance_by(0.01)
    sub.assert_values([1, 2], [3])
    tp.complete()
    sub.assert_result([1, 2], [3]).assert_no_violations()
    assert ts.pending == 0


def test_buffer_timed_one_request_at_a_time_fails_when_a_list_finds_no_demand() -> None:
    ts, tp, sub = _src(lambda f, s: f.buffer_timed(1, scheduler=s), request=1)
    tp.next(1)
    ts.advance_by(1)
    sub.assert_values([1])
    sub.request(1)
    ts.advance_by(1)
    sub.assert_values([1], [])
    ts.advance_by(1)
    sub.assert_values([1], []).assert_error(
        MissingBackpressureError, match="buffer_timed"
    ).assert_no_violations()
    assert tp.was_cancelled and ts.pending == 0


def test_window_timed_windows_follow_the_timer_and_restart_on_size() -> None:
    ts, tp, sub = _src(
        lambda f, s: f.window_timed(1, 2, s).concat_map(lambda w: w.to_list(), prefetch=1 << 10)
    )
    tp.next(1, 2, 3)
    ts.advance_by(1)
    tp.next(4)
    tp.complete()
    sub.assert_result([1, 2], [3], [4]).assert_no_violations()
    assert ts.pending == 0


def test_window_timed_error_reaches_the_open_window_and_the_main() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    windows: list[TestSubscriber[int]] = []
    sub: TestSubscriber[Any] = TestSubscriber()
    Flowable.from_publisher(tp).window_timed(1, scheduler=ts).do_on_next(
        lambda w: windows.append(w.test())
    ).subscribe(sub)
    tp.next(1)
    tp.error(KeyError("k"))
    windows[0].assert_values(1).assert_error(KeyError).assert_no_violations()
    sub.assert_error(KeyError).assert_no_violations()
    assert ts.pending == 0


@pytest.mark.parametrize("count", [None, 3])
def test_window_timed_main_cancel_lets_the_subscribed_window_run_to_its_end(count: int | None) -> None:
    # RxJava: after the main subscriber cancels, the open window still gets its elements and
    # closes on time; then no new window opens and the upstream is cancelled
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    windows: list[TestSubscriber[int]] = []
    sub: TestSubscriber[Any] = TestSubscriber()
    Flowable.from_publisher(tp).window_timed(1, count, ts).do_on_next(
        lambda w: windows.append(w.test())
    ).subscribe(sub)
    tp.next(1)
    sub.cancel()
    assert not tp.was_cancelled  # the subscribed window keeps it alive
    tp.next(2)
    ts.advance_by(1)
    windows[0].assert_result(1, 2).assert_no_violations()
    assert tp.was_cancelled and ts.pending == 0
    sub.assert_value_count(1).assert_not_terminated().assert_no_violations()


def test_window_timed_main_cancel_then_window_cancel_cancels_the_upstream() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    windows: list[TestSubscriber[int]] = []
    sub: TestSubscriber[Any] = TestSubscriber()
    Flowable.from_publisher(tp).window_timed(1, scheduler=ts).do_on_next(
        lambda w: windows.append(w.test())
    ).subscribe(sub)
    sub.cancel()
    assert not tp.was_cancelled
    windows[0].cancel()
    assert tp.was_cancelled and ts.pending == 0
    sub.assert_no_violations()
    windows[0].assert_no_violations()


# =============================================================================================
# retry policies and retry_when on timers
# =============================================================================================


def test_retry_backoff_delays_grow_then_cap_without_overflow() -> None:
    spec = Retry.backoff(5000, 0.001, max_backoff=2.0, jitter=0)
    assert spec.delay_for(1) == 0.001
    assert spec.delay_for(3) == 0.004
    assert spec.delay_for(40) == 2.0
    assert spec.delay_for(2000) == 2.0  # 2.0 ** 1999 overflows a float: the cap applies
    jittered = Retry.backoff(5000, 0.5, max_backoff=4.0, jitter=0.5)
    assert all(0.5 <= jittered.delay_for(k) <= 4.0 for k in (1, 2, 10, 1500, 4999))
    assert Retry.backoff(10, 0.0, max_backoff=3.0).delay_for(4) == 0.0


def test_retry_backoff_many_attempts_past_the_float_range() -> None:
    ts = TestScheduler()
    attempts = [0]

    def make() -> Flowable[int]:
        attempts[0] += 1
        return Flowable.error(OSError("down")) if attempts[0] <= 1100 else Flowable.just(1)

    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.defer(make).retry_policy(
        Retry.backoff(2000, 0.001, max_backoff=0.01, jitter=0).with_scheduler(ts)
    ).subscribe(sub)
    ts.advance_by(1100 * 0.01)
    sub.assert_result(1).assert_no_violations()


def test_retry_backoff_on_virtual_time_keeps_demand_and_cancels_its_timer() -> None:
    ts = TestScheduler()
    attempts = [0]

    def make() -> Flowable[int]:
        attempts[0] += 1
        return Flowable.concat(Flowable.just(attempts[0]), Flowable.error(OSError("down")))

    sub: TestSubscriber[int] = TestSubscriber(1)
    Flowable.defer(make).retry_policy(Retry.fixed_delay(5, 1).with_scheduler(ts)).subscribe(sub)
    sub.assert_values(1)
    ts.advance_by(1)
    sub.assert_values(1)  # resubscribed, but no demand for its element yet
    sub.request(1)
    sub.assert_values(1, 2)
    ts.advance_by(0.5)
    sub.cancel()
    assert ts.pending == 0
    ts.advance_by(10)
    assert attempts[0] == 2
    sub.assert_values(1, 2).assert_not_terminated().assert_no_violations()


def test_retry_when_with_timer_resubscribes_after_each_delay_then_completes() -> None:
    ts = TestScheduler()
    times: list[float] = []

    def make() -> Flowable[int]:
        times.append(ts.now())
        return Flowable.error(OSError("x"))

    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.defer(make).retry_when(
        lambda errors: errors.take(2).concat_map(lambda e: Flowable.timer(0.5, ts))
    ).subscribe(sub)
    ts.advance_by(5)
    assert times == [0.0, 0.5, 1.0]
    sub.assert_result().assert_no_violations()


def test_retry_backoff_exhausted_after_the_last_delay() -> None:
    ts = TestScheduler()
    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.error(OSError("down")).retry_policy(
        Retry.backoff(2, 0.1, jitter=0).with_scheduler(ts)
    ).subscribe(sub)
    ts.advance_by(0.1 + 0.2 - 0.001)
    sub.assert_empty()
    ts.advance_by(0.001)
    sub.assert_error(RetryExhaustedError).assert_no_violations()
    assert isinstance(sub.errors[0].__cause__, OSError)
