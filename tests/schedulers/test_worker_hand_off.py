"""The Worker hand-off of the thread-backed schedulers (EventLoop / LoopWorker).

The hot path: immediate tasks are one-shot handles (or, through ``Worker.submit``, bare tasks with
no handle) that the loop pops without its lock and runs only while their worker is not disposed;
one lock round trip per wake-up. These tests pin what that path must keep: FIFO per worker across
``schedule`` and ``submit``, tasks queued while the loop is awake, a disposed worker running
nothing more (queued tasks included), a disposed handle never running, the schedule hook, errors
to the error hook, contextvars, timed tasks tracked and released, ``stop()`` racing the lock-free
pop, and no thread left after dispose.
"""

from __future__ import annotations

import contextvars
import math
import random
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial

import pytest

from rstreams import plugins, schedulers
from rstreams.schedulers import Scheduler, Worker
from rstreams.schedulers._base import DISPOSED, TaskHandle
from rstreams.schedulers._threads import (
    ComputationScheduler,
    EventLoop,
    IoScheduler,
    LoopWorker,
    NewThreadScheduler,
    SingleScheduler,
)
from rstreams.testing import TestScheduler

MAKERS: dict[str, Callable[[], Scheduler]] = {
    "single": lambda: SingleScheduler("test-hand-off-single"),
    "new_thread": lambda: NewThreadScheduler("test-hand-off-new"),
    "computation": lambda: ComputationScheduler(2, "test-hand-off-comp"),
    "io": lambda: IoScheduler(4, 5.0, "test-hand-off-io"),
}


@pytest.fixture(params=list(MAKERS))
def scheduler(request: pytest.FixtureRequest) -> Iterator[Scheduler]:
    s = MAKERS[request.param]()
    try:
        yield s
    finally:
        s.shutdown()


def _blocked(w: Worker) -> threading.Event:
    """Park ``w``'s thread inside a task until the returned event is set (tasks queue up behind)."""
    started, gate = threading.Event(), threading.Event()

    def park() -> None:
        started.set()
        gate.wait(5)

    w.schedule(park)
    assert started.wait(5)
    return gate


def _flush(w: Worker) -> None:
    done = threading.Event()
    w.schedule(done.set)
    assert done.wait(5)


def test_submit_and_schedule_share_one_fifo(scheduler: Scheduler) -> None:
    w = scheduler.create_worker()
    out: list[int] = []
    for i in range(200):
        if i % 3:
            w.submit(partial(out.append, i))
        else:
            w.schedule(partial(out.append, i))
    _flush(w)
    w.dispose()
    assert out == list(range(200))


def test_submit_runs_on_the_workers_thread_and_returns_nothing(scheduler: Scheduler) -> None:
    w = scheduler.create_worker()
    seen: list[threading.Thread] = []
    assert w.submit(lambda: seen.append(threading.current_thread())) is None  # type: ignore[func-returns-value]
    _flush(w)
    assert isinstance(w, LoopWorker)
    assert seen == [w.thread]
    w.dispose()


def test_tasks_queued_while_the_loop_is_awake_run_in_order_after_the_running_one(
    scheduler: Scheduler,
) -> None:
    w = scheduler.create_worker()
    out: list[str] = []

    def first() -> None:
        w.submit(lambda: out.append("c"))
        w.schedule(lambda: out.append("d"))
        out.append("a")

    w.schedule(first)
    w.submit(lambda: out.append("b"))
    _flush(w)
    w.dispose()
    # b was queued before first ran: first's own tasks come after it (FIFO per worker)
    assert out == ["a", "b", "c", "d"]


def test_a_disposed_worker_runs_none_of_its_queued_tasks(scheduler: Scheduler) -> None:
    w = scheduler.create_worker()
    other = scheduler.create_worker()  # may share the thread (single, computation, io beyond max)
    gate = _blocked(w)
    ran: list[str] = []
    handles = [w.schedule(lambda: ran.append("schedule")) for _ in range(5)]
    for _ in range(5):
        w.submit(lambda: ran.append("submit"))
    timed = w.schedule(lambda: ran.append("timed"), 0.01)
    w.dispose()
    gate.set()
    _flush(other)  # a later task of another worker on the same kind of thread has run
    time.sleep(0.05)  # past the timed task's due time
    assert ran == []
    assert timed.is_disposed
    assert all(h.is_disposed for h in handles)  # skipped by the loop: disposed with their worker
    # and after dispose nothing is accepted
    assert w.schedule(lambda: ran.append("late")) is DISPOSED
    w.submit(lambda: ran.append("late"))
    _flush(other)
    assert ran == []
    other.dispose()


def test_a_disposed_immediate_handle_never_runs_and_a_run_one_is_disposed(scheduler: Scheduler) -> None:
    w = scheduler.create_worker()
    gate = _blocked(w)
    ran: list[int] = []
    cancelled = w.schedule(lambda: ran.append(1))
    kept = w.schedule(lambda: ran.append(2))
    cancelled.dispose()
    assert cancelled.is_disposed and not kept.is_disposed
    gate.set()
    _flush(w)
    assert ran == [2]
    assert kept.is_disposed  # a task that ran is done (as RxJava's ScheduledRunnable)
    w.dispose()


def test_a_cancelled_delayed_task_never_runs_and_leaves_the_worker(scheduler: Scheduler) -> None:
    w = scheduler.create_worker()
    assert isinstance(w, LoopWorker)
    ran: list[int] = []
    h = w.schedule(lambda: ran.append(1), 0.02)
    assert len(w._handles) == 1
    h.dispose()
    assert len(w._handles) == 0  # rule 3.13: the reference is dropped at once
    done = threading.Event()
    w.schedule(done.set, 0.04)
    assert done.wait(5)
    assert ran == []
    assert len(w._handles) == 0  # a timed task that ran is forgotten too
    w.dispose()


def test_delayed_tasks_run_in_due_order_and_nan_means_now(scheduler: Scheduler) -> None:
    w = scheduler.create_worker()
    out: list[str] = []
    done = threading.Event()

    def late() -> None:
        out.append("late")
        done.set()

    w.schedule(late, 0.03)
    w.schedule(lambda: out.append("early"), 0.01)
    w.schedule(lambda: out.append("nan"), math.nan)
    w.schedule(lambda: out.append("now"), -1.0)
    assert done.wait(5)
    assert out == ["nan", "now", "early", "late"]
    w.dispose()


def test_periodic_tasks_still_run_and_stop_on_dispose(scheduler: Scheduler) -> None:
    w = scheduler.create_worker()
    ticks: list[int] = []
    three = threading.Event()

    def tick() -> None:
        ticks.append(1)
        if len(ticks) == 3:
            three.set()

    h = w.schedule_periodic(tick, 0.0, 0.005)
    assert three.wait(5)
    h.dispose()
    _flush(w)
    n = len(ticks)
    time.sleep(0.03)
    assert len(ticks) == n
    w.dispose()


def test_errors_of_submitted_and_scheduled_tasks_go_to_the_error_hook(scheduler: Scheduler) -> None:
    w = scheduler.create_worker()
    out: list[int] = []

    def boom() -> None:
        raise ValueError("boom")

    with plugins.collect_errors() as errors:
        w.submit(boom)
        w.schedule(boom)
        w.submit(lambda: out.append(1))  # the loop survives
        _flush(w)
    w.dispose()
    assert out == [1]
    assert [type(e) for e in errors] == [ValueError, ValueError]


def test_the_schedule_hook_wraps_submitted_tasks(scheduler: Scheduler) -> None:
    log: list[str] = []

    def hook(task: Callable[[], object]) -> Callable[[], object]:
        def wrapped() -> object:
            log.append("wrapped")
            return task()

        return wrapped

    plugins.set_on_schedule(hook)
    try:
        w = scheduler.create_worker()
        out: list[int] = []
        w.submit(lambda: out.append(1))
        w.schedule(lambda: out.append(2))
        w.schedule(lambda: out.append(3), 0.001)
        done = threading.Event()
        w.schedule(done.set, 0.002)
        assert done.wait(5)
    finally:
        plugins.set_on_schedule(None)
    w.dispose()
    assert out == [1, 2, 3]
    assert log.count("wrapped") >= 3


def test_submitted_tasks_run_in_the_context_captured_with_the_worker(scheduler: Scheduler) -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("test_hand_off_var", default="unset")
    token = var.set("at-subscribe")
    try:
        w = scheduler.create_worker()
    finally:
        var.reset(token)
    seen: list[str] = []
    w.submit(lambda: seen.append(var.get()))
    w.schedule(lambda: seen.append(var.get()))
    _flush(w)
    w.dispose()
    assert seen == ["at-subscribe", "at-subscribe"]


def test_many_threads_submitting_keep_each_ones_order_and_lose_nothing(scheduler: Scheduler) -> None:
    w = scheduler.create_worker()
    per_thread, threads = 500, 4
    out: list[tuple[int, int]] = []
    rng = random.Random(20261126)
    pauses = [[rng.random() < 0.05 for _ in range(per_thread)] for _ in range(threads)]

    def producer(t: int) -> None:
        for i in range(per_thread):
            if i % 2:
                w.submit(partial(out.append, (t, i)))
            else:
                w.schedule(partial(out.append, (t, i)))
            if pauses[t][i]:
                time.sleep(0.0001)  # let the loop go to sleep: the next one must wake it

    ts = [threading.Thread(target=producer, args=(k,)) for k in range(threads)]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    _flush(w)
    w.dispose()
    assert len(out) == per_thread * threads
    for k in range(threads):
        assert [i for tt, i in out if tt == k] == list(range(per_thread))


def test_ping_pong_between_two_workers_hands_off_every_time() -> None:
    s = NewThreadScheduler("test-hand-off-ping")
    a, b = s.create_worker(), s.create_worker()
    n = 2000
    count = [0]
    done = threading.Event()

    def ping() -> None:
        count[0] += 1
        if count[0] >= n:
            done.set()
        else:
            b.submit(pong)

    def pong() -> None:
        count[0] += 1
        if count[0] >= n:
            done.set()
        else:
            a.schedule(ping)

    a.submit(ping)
    assert done.wait(10), f"stopped after {count[0]} hand-offs (lost wake-up)"
    a.dispose()
    b.dispose()
    assert count[0] == n


def _increment(counter: list[int]) -> None:
    counter[0] += 1


def test_stop_racing_the_lock_free_pop_reports_nothing_and_ends_the_thread() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        loop = EventLoop(f"test-hand-off-stop-{seed}")
        w = LoopWorker(loop, owns_loop=True)
        ran = [0]
        task = partial(_increment, ran)

        with plugins.collect_errors() as errors:
            for _ in range(rng.randint(100, 3000)):
                w.submit(task)
            time.sleep(rng.choice([0.0, 0.0001, 0.001]))
            loop.stop()
            after = ran[0]
            loop.thread.join(5)
        assert not loop.thread.is_alive()
        assert not errors, errors
        assert ran[0] <= after + 1  # at most the task running when stop() came
        assert w.schedule(task) is DISPOSED  # a stopped loop accepts nothing
        w.submit(task)
        assert ran[0] <= after + 1
        w.dispose()


def test_a_stopped_loop_returns_false_and_drops_queued_references() -> None:
    loop = EventLoop("test-hand-off-drop")
    gate = threading.Event()
    started = threading.Event()

    def park() -> None:
        started.set()
        gate.wait(5)

    assert loop.submit(TaskHandle(park), 0.0, None)
    assert started.wait(5)
    for _ in range(10):
        assert loop.submit(TaskHandle(lambda: None), 0.0, None)
    assert loop.submit(TaskHandle(lambda: None), 60.0, None)
    loop.stop()
    assert len(loop._ready) == 0 and len(loop._timed) == 0  # rule 3.13: nothing kept
    assert not loop.submit(TaskHandle(lambda: None), 0.0, None)
    gate.set()
    loop.thread.join(5)
    assert not loop.thread.is_alive()


def test_no_thread_is_left_after_new_thread_workers_are_disposed() -> None:
    s = NewThreadScheduler("test-hand-off-leak")
    ws = [s.create_worker() for _ in range(8)]
    threads = [w.thread for w in ws]  # type: ignore[attr-defined]
    for w in ws:
        w.submit(lambda: None)
        _flush(w)
        w.dispose()
    for t in threads:
        t.join(5)
        assert not t.is_alive()
        assert t.daemon


def test_submit_of_the_other_workers_is_schedule_without_the_handle() -> None:
    # the base Worker.submit delegates to schedule: same order, same dispose semantics
    sched = TestScheduler()
    w = sched.create_worker()
    out: list[int] = []
    w.submit(lambda: out.append(1))
    w.schedule(lambda: out.append(2))
    w.submit(lambda: out.append(3))
    sched.trigger_actions()
    assert out == [1, 2, 3]
    w.dispose()
    w.submit(lambda: out.append(4))
    sched.trigger_actions()
    assert out == [1, 2, 3]
    imm: list[int] = []
    schedulers.immediate().create_worker().submit(lambda: imm.append(1))
    assert imm == [1]


@pytest.mark.parametrize("raised", [KeyboardInterrupt, SystemExit, GeneratorExit])
def test_a_task_raising_a_base_exception_is_reported_and_the_loop_goes_on(
    scheduler: Scheduler, raised: type[BaseException]
) -> None:
    """The loop thread serves every later task of its workers: a task that raises anything, even
    a BaseException (an asyncio CancelledError, SystemExit), is reported to the error hook and the
    next task still runs."""

    def boom() -> None:
        raise raised("from a task")

    w = scheduler.create_worker()
    try:
        with plugins.collect_errors() as reported:
            w.submit(boom)
            _flush(w)
            later = scheduler.create_worker()
            try:
                _flush(later)
            finally:
                later.dispose()
        assert [type(e) for e in reported] == [raised]
    finally:
        w.dispose()


def test_disposed_timers_are_dropped_not_kept_until_due(scheduler: Scheduler) -> None:
    """Rule 3.13: a disposed timer does not hold its task (and context) until it falls due: the
    timed heap is rebuilt without them as it grows."""
    w = scheduler.create_worker()
    try:
        for _ in range(10_000):
            w.schedule(lambda: None, 3600.0).dispose()
        _flush(w)
        assert isinstance(w, LoopWorker)
        assert len(w._loop._timed) <= 200
    finally:
        w.dispose()


def test_an_io_thread_whose_only_timer_was_disposed_retires() -> None:
    """A disposed far-future timer keeps no io() thread awake past its keep-alive."""
    io = IoScheduler(2, 0.05, "test-hand-off-retire")
    try:
        w = io.create_worker()
        _flush(w)
        w.schedule(lambda: None, 3600.0)
        w.dispose()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(
            t.name.startswith("test-hand-off-retire") for t in threading.enumerate()
        ):
            time.sleep(0.01)
        assert not [t.name for t in threading.enumerate() if t.name.startswith("test-hand-off-retire")]
    finally:
        io.shutdown()
