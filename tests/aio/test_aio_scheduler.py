"""``AsyncioScheduler``: a Worker on an event loop, entered from any thread."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from rstreams import Flowable, schedulers
from rstreams.aio import AsyncioScheduler
from rstreams.schedulers import Scheduler
from rstreams.testing import TestSubscriber

from .util import run

_var: contextvars.ContextVar[str] = contextvars.ContextVar("_var", default="unset")


def test_is_a_scheduler_and_checks_its_argument() -> None:
    async def main() -> None:
        s = AsyncioScheduler(asyncio.get_running_loop())
        assert isinstance(s, Scheduler)
        assert s.loop is asyncio.get_running_loop()
        assert AsyncioScheduler().loop is asyncio.get_running_loop()

    run(main())
    with pytest.raises(TypeError):
        AsyncioScheduler(42)  # type: ignore[arg-type]


def test_tasks_run_on_loop_thread_in_fifo_order_from_any_thread() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        w = AsyncioScheduler(loop).create_worker()
        order: list[int] = []
        tids: set[int] = set()
        done = asyncio.Event()

        def task(i: int) -> None:
            order.append(i)
            tids.add(threading.get_ident())
            if i == 199:
                done.set()

        for i in range(100):
            w.schedule(lambda i=i: task(i))  # same thread: call_soon

        def other() -> None:
            for i in range(100, 200):
                w.schedule(lambda i=i: task(i))  # other thread: call_soon_threadsafe

        t = threading.Thread(target=other)
        t.start()
        t.join()
        await asyncio.wait_for(done.wait(), 1)
        assert order == list(range(200))
        assert tids == {threading.get_ident()}
        w.dispose()

    run(main())


def test_delayed_tasks_and_dispose_cancels_pending() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        w = AsyncioScheduler(loop).create_worker()
        ran: list[str] = []
        w.schedule(lambda: ran.append("soon"), 0.005)
        h = w.schedule(lambda: ran.append("disposed"), 0.005)
        h.dispose()
        t = threading.Thread(target=lambda: w.schedule(lambda: ran.append("from-thread"), 0.005))
        t.start()
        t.join()
        w.schedule(lambda: ran.append("never"), 0.5)
        await asyncio.sleep(0.03)
        assert sorted(ran) == ["from-thread", "soon"]
        timers_before = len(loop._scheduled)  # type: ignore[attr-defined]
        w.dispose()
        await asyncio.sleep(0)
        assert w.is_disposed
        assert w.schedule(lambda: ran.append("after dispose")).is_disposed
        await asyncio.sleep(0.01)
        assert "never" not in ran and "after dispose" not in ran
        # the pending TimerHandle was cancelled (asyncio drops cancelled timers lazily)
        assert all(h.cancelled() for h in loop._scheduled) or len(loop._scheduled) < timers_before  # type: ignore[attr-defined]

    run(main())


def test_task_error_goes_to_undeliverable_hook(undeliverable: list[BaseException]) -> None:
    async def main() -> None:
        w = AsyncioScheduler(asyncio.get_running_loop()).create_worker()

        def bad() -> None:
            raise ValueError("task failed")

        w.schedule(bad)
        await asyncio.sleep(0.01)
        w.dispose()

    run(main())
    assert any(
        "task failed" in repr(e) or "task failed" in repr(getattr(e, "__cause__", None))
        for e in undeliverable
    )


def test_contextvars_captured_at_worker_creation() -> None:
    async def main() -> str:
        _var.set("subscriber")
        w = AsyncioScheduler(asyncio.get_running_loop()).create_worker()
        _var.set("changed")
        seen: list[str] = []
        t = threading.Thread(target=lambda: w.schedule(lambda: seen.append(_var.get())))
        t.start()
        t.join()
        await asyncio.sleep(0.01)
        w.dispose()
        return seen[0]

    assert run(main()) == "subscriber"


def test_observe_on_delivers_on_loop_thread_in_batches() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        calls = [0]
        orig = loop.call_soon_threadsafe

        def counting(*a: object, **k: object) -> object:
            calls[0] += 1
            return orig(*a, **k)  # type: ignore[arg-type]

        loop.call_soon_threadsafe = counting  # type: ignore[method-assign,assignment]
        ts: TestSubscriber[int] = TestSubscriber()
        Flowable.range(0, 5000).subscribe_on(schedulers.io()).observe_on(AsyncioScheduler(loop)).subscribe(ts)
        for _ in range(500):
            if ts.is_terminated:
                break
            await asyncio.sleep(0.002)
        ts.assert_result(*range(5000)).assert_no_violations()
        assert set(ts.value_threads) == {threading.current_thread().name}
        assert calls[0] < 5000 // 10

    run(main())


def test_observe_on_background_loop_scheduler() -> None:
    ts = Flowable.range(0, 100).observe_on(AsyncioScheduler()).test()
    ts.await_done(2).assert_result(*range(100)).assert_no_violations()
    assert set(ts.value_threads) == {"rstreams-aio-loop"}


def test_time_operator_on_asyncio_scheduler() -> None:
    async def main() -> list[int]:
        s = AsyncioScheduler(asyncio.get_running_loop())
        return await Flowable.interval(0.002, scheduler=s).take(5).to_list()

    assert run(main()) == [0, 1, 2, 3, 4]
