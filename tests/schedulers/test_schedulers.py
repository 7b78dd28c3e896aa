"""The Scheduler/Worker contract, for every scheduler; TestScheduler virtual time."""

from __future__ import annotations

import concurrent.futures
import contextvars
import threading
import time
from typing import Any

import pytest

from rstreams import plugins, schedulers
from rstreams.schedulers import Scheduler
from rstreams.testing import TestScheduler

_pool = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="test-exec")

ALL: dict[str, Any] = {
    "immediate": schedulers.immediate,
    "trampoline": schedulers.trampoline,
    "single": schedulers.single,
    "new_thread": schedulers.new_thread,
    "computation": schedulers.computation,
    "io": schedulers.io,
    "from_executor": lambda: schedulers.from_executor(_pool),
}
THREADED = ["single", "new_thread", "computation", "io", "from_executor"]


def test_shared_instances() -> None:
    assert schedulers.single() is schedulers.single()
    assert schedulers.computation() is schedulers.computation()
    assert schedulers.io() is schedulers.io()
    assert schedulers.trampoline() is schedulers.trampoline()


@pytest.mark.parametrize("name", list(ALL))
def test_worker_runs_tasks_in_fifo_order(name: str) -> None:
    s: Scheduler = ALL[name]()
    w = s.create_worker()
    out: list[int] = []
    done = threading.Event()
    for i in range(50):
        w.schedule(lambda i=i: out.append(i))
    w.schedule(done.set)
    assert done.wait(5)
    w.dispose()
    assert out == list(range(50))


@pytest.mark.parametrize("name", THREADED)
def test_worker_never_runs_tasks_concurrently(name: str) -> None:
    s: Scheduler = ALL[name]()
    w = s.create_worker()
    active = [0]
    overlap = []
    done = threading.Event()

    def task() -> None:
        active[0] += 1
        if active[0] > 1:
            overlap.append(1)
        time.sleep(0.0005)
        active[0] -= 1

    threads = [threading.Thread(target=lambda: [w.schedule(task) for _ in range(20)]) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    w.schedule(done.set)
    assert done.wait(5)
    w.dispose()
    assert not overlap


@pytest.mark.parametrize("name", THREADED)
def test_delayed_tasks_run_after_their_delay_in_time_order(name: str) -> None:
    s: Scheduler = ALL[name]()
    w = s.create_worker()
    out: list[str] = []
    done = threading.Event()
    start = time.monotonic()
    w.schedule(lambda: (out.append("b"), done.set()), 0.05)
    w.schedule(lambda: out.append("a"), 0.01)
    assert done.wait(5)
    assert time.monotonic() - start >= 0.045
    assert out == ["a", "b"]
    w.dispose()


@pytest.mark.parametrize("name", THREADED)
def test_dispose_cancels_pending_tasks_and_refuses_new_ones(name: str) -> None:
    s: Scheduler = ALL[name]()
    w = s.create_worker()
    out: list[int] = []
    w.schedule(lambda: out.append(1), 0.05)
    w.dispose()
    assert w.is_disposed
    h = w.schedule(lambda: out.append(2))
    assert h.is_disposed
    time.sleep(0.1)
    assert out == []


@pytest.mark.parametrize("name", THREADED)
def test_task_handle_dispose_cancels_one_task(name: str) -> None:
    s: Scheduler = ALL[name]()
    w = s.create_worker()
    out: list[int] = []
    done = threading.Event()
    h = w.schedule(lambda: out.append(1), 0.03)
    w.schedule(lambda: out.append(2), 0.01)
    w.schedule(done.set, 0.06)
    h.dispose()
    assert done.wait(5)
    assert out == [2]
    w.dispose()


@pytest.mark.parametrize("name", THREADED)
def test_periodic_runs_repeatedly_until_disposed(name: str) -> None:
    s: Scheduler = ALL[name]()
    w = s.create_worker()
    ticks: list[float] = []
    h = w.schedule_periodic(lambda: ticks.append(time.monotonic()), 0.0, 0.01)
    deadline = time.monotonic() + 5  # four ticks, however loaded the machine (a fixed sleep got fewer)
    while len(ticks) < 4 and time.monotonic() < deadline:
        time.sleep(0.005)
    h.dispose()
    n = len(ticks)
    time.sleep(0.05)  # nothing more than the tick already running may come after dispose()
    w.dispose()
    assert n >= 4
    assert len(ticks) <= n + 1


@pytest.mark.parametrize("name", list(ALL))
def test_raising_task_goes_to_hook_and_worker_survives(name: str) -> None:
    s: Scheduler = ALL[name]()
    w = s.create_worker()
    done = threading.Event()
    with plugins.collect_errors() as errors:
        w.schedule(lambda: 1 / 0)
        w.schedule(done.set)
        assert done.wait(5)
    w.dispose()
    assert len(errors) == 1 and isinstance(errors[0], ZeroDivisionError)


_var: contextvars.ContextVar[str] = contextvars.ContextVar("_var", default="unset")


@pytest.mark.parametrize("name", THREADED)
def test_contextvars_captured_at_worker_creation_are_restored(name: str) -> None:
    s: Scheduler = ALL[name]()
    token = _var.set("subscriber-context")
    try:
        w = s.create_worker()
    finally:
        _var.reset(token)
    seen: list[str] = []
    done = threading.Event()
    w.schedule(lambda: (seen.append(_var.get()), done.set()))
    assert done.wait(5)
    w.dispose()
    assert seen == ["subscriber-context"]


def test_new_thread_worker_thread_ends_on_dispose() -> None:
    w = schedulers.new_thread().create_worker()
    started = threading.Event()
    w.schedule(started.set)
    assert started.wait(5)
    t = w.thread  # type: ignore[attr-defined]
    assert t.is_alive() and t.daemon and t.name.startswith("rstreams-new-thread")
    w.dispose()
    t.join(2)
    assert not t.is_alive()


def test_io_threads_are_bounded_and_named() -> None:
    from rstreams.schedulers._threads import IoScheduler

    io = IoScheduler(max_threads=2, keep_alive=0.2)
    workers = [io.create_worker() for _ in range(5)]
    names = {w.thread.name for w in workers}  # type: ignore[attr-defined]
    assert len(names) == 2 and all(n.startswith("rstreams-io") for n in names)
    for w in workers:
        w.dispose()
    threads = {w.thread for w in workers}  # type: ignore[attr-defined]
    for t in threads:
        t.join(3)
    assert not any(t.is_alive() for t in threads)  # idle threads expire
    io.shutdown()


def test_trampoline_queues_reentrant_tasks_without_recursion() -> None:
    w = schedulers.trampoline().create_worker()
    out: list[int] = []

    def task(i: int) -> None:
        out.append(i)
        if i < 5000:
            w.schedule(lambda: task(i + 1))

    w.schedule(lambda: task(0))
    assert len(out) == 5001


def test_test_scheduler_virtual_time() -> None:
    ts = TestScheduler()
    w = ts.create_worker()
    seen: list[tuple[str, float]] = []
    w.schedule(lambda: seen.append(("b", ts.now())), 5)
    w.schedule(lambda: seen.append(("a", ts.now())), 2)
    w.schedule(lambda: seen.append(("a2", ts.now())), 2)
    ts.advance_by(1)
    assert seen == []
    ts.advance_by(1)
    assert seen == [("a", 2.0), ("a2", 2.0)]
    ts.advance_to(10)
    assert seen[-1] == ("b", 5.0) and ts.now() == 10.0
    with pytest.raises(ValueError):
        ts.advance_by(-1)


def test_test_scheduler_periodic_and_nested() -> None:
    ts = TestScheduler()
    w = ts.create_worker()
    ticks: list[float] = []
    h = w.schedule_periodic(lambda: ticks.append(ts.now()), 1, 2)
    ts.advance_by(6)
    assert ticks == [1.0, 3.0, 5.0]
    h.dispose()
    ts.advance_by(10)
    assert ticks == [1.0, 3.0, 5.0]
    out: list[float] = []
    w.schedule(lambda: w.schedule(lambda: out.append(ts.now()), 1))
    ts.trigger_actions()
    assert out == []
    ts.advance_by(1)
    assert out == [17.0]
