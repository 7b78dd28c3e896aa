"""The EventLoop's wake-up (a raw lock used as a binary semaphore) and the io() idle stack.

Races covered: a submit landing just after a timed wait expired (the permit must be consumed, or
the next release raises "release unlocked lock" and a task is lost); many threads submitting while
the loop sleeps and wakes; stop() while sleeping; io() re-leasing a thread whose worker was just
disposed. Seeded and bounded in time.
"""

from __future__ import annotations

import random
import threading
import time

from rstreams import plugins
from rstreams.schedulers._base import TaskHandle
from rstreams.schedulers._threads import EventLoop, IoScheduler


def _submit(loop: EventLoop, fn: object, delay: float = 0.0) -> bool:
    return loop.submit(TaskHandle(fn), delay, None)  # type: ignore[arg-type]


def test_submit_racing_timed_wake_ups_loses_no_task_and_never_double_releases() -> None:
    rng = random.Random(20261122)
    loop = EventLoop("test-wake-timed")
    ran: list[int] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def record(i: int) -> None:
        with lock:
            ran.append(i)

    with plugins.collect_errors() as hooked:
        try:
            n = 0
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline and n < 3000:
                # a timed task makes the loop sleep with a timeout that expires around now
                d = rng.choice([0.0, 0.0001, 0.0002, 0.0005])
                i = n
                n += 1
                _submit(loop, lambda i=i: record(i), d)
                if rng.random() < 0.5:
                    time.sleep(rng.choice([0.0, 0.0001, 0.0003]))
            end = time.monotonic() + 5
            while time.monotonic() < end:
                with lock:
                    if len(ran) == n:
                        break
                time.sleep(0.005)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)
        finally:
            loop.stop()
    assert not errors
    assert not hooked, hooked
    assert sorted(ran) == list(range(n)), f"{n - len(ran)} of {n} tasks never ran"


def test_many_submitters_wake_a_sleeping_loop_every_time() -> None:
    loop = EventLoop("test-wake-many")
    done = threading.Semaphore(0)
    per_thread, threads = 400, 4
    rng = random.Random(7)
    pauses = [rng.choice([0.0, 0.00005, 0.0002]) for _ in range(per_thread)]

    def submitter() -> None:
        for p in pauses:
            _submit(loop, done.release)
            if p:
                time.sleep(p)

    ts = [threading.Thread(target=submitter) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for k in range(per_thread * threads):
        assert done.acquire(timeout=5), f"task {k} never ran (lost wake-up)"
    loop.stop()


def test_stop_wakes_a_sleeping_loop_and_its_thread_ends() -> None:
    loop = EventLoop("test-wake-stop")
    time.sleep(0.02)  # let it go to sleep with no timeout
    loop.stop()
    loop.thread.join(2)
    assert not loop.thread.is_alive()
    assert not _submit(loop, lambda: None)


def test_idle_timeout_retires_a_loop_nobody_leases() -> None:
    io = IoScheduler(max_threads=4, keep_alive=0.05, name="test-io-retire")
    w = io.create_worker()
    ran = threading.Event()
    w.schedule(ran.set)
    assert ran.wait(2)
    thread = w.thread  # type: ignore[attr-defined]
    w.dispose()
    thread.join(2)
    assert not thread.is_alive(), "an idle io() thread must exit after keep_alive"
    # and the pool starts a fresh one afterwards
    w2 = io.create_worker()
    ran2 = threading.Event()
    w2.schedule(ran2.set)
    assert ran2.wait(2)
    assert w2.thread is not thread  # type: ignore[attr-defined]
    w2.dispose()
    io.shutdown()


def test_io_reuses_the_thread_of_the_worker_disposed_last() -> None:
    io = IoScheduler(max_threads=8, keep_alive=5, name="test-io-lifo")
    try:
        a, b = io.create_worker(), io.create_worker()
        ta, tb = a.thread, b.thread  # type: ignore[attr-defined]
        assert ta is not tb
        b.dispose()
        a.dispose()
        c = io.create_worker()
        assert c.thread is ta  # type: ignore[attr-defined]  # most recently released first
        d = io.create_worker()
        assert d.thread is tb  # type: ignore[attr-defined]
        e = io.create_worker()  # none idle: a new thread
        assert e.thread not in (ta, tb)  # type: ignore[attr-defined]
        for w in (c, d, e):
            w.dispose()
    finally:
        io.shutdown()


def test_io_beyond_max_threads_shares_the_least_leased_thread() -> None:
    io = IoScheduler(max_threads=2, keep_alive=5, name="test-io-max")
    try:
        ws = [io.create_worker() for _ in range(5)]
        threads = {w.thread for w in ws}  # type: ignore[attr-defined]
        assert len(threads) == 2
        results: list[int] = []
        done = threading.Semaphore(0)
        for i, w in enumerate(ws):
            w.schedule(lambda i=i: (results.append(i), done.release()))
        for _ in ws:
            assert done.acquire(timeout=2)
        assert sorted(results) == list(range(5))
        for w in ws:
            w.dispose()
    finally:
        io.shutdown()
