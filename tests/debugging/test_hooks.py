"""rstreams.plugins hooks: on assembly (inspect or wrap each new Flowable), on each scheduled task
(wrap it), resettable; global state restored after each test."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rstreams import Flowable, plugins, schedulers
from rstreams.aio import AsyncioScheduler
from rstreams.testing import TestScheduler


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    yield
    plugins.reset()


# ------------------------------------------------------------------------------ assembly hook


def test_assembly_hook_sees_every_facade_result() -> None:
    seen: list[str] = []

    def inspect(f: Flowable[Any]) -> Flowable[Any]:
        seen.append(type(f).__name__)
        return f

    plugins.set_on_assembly(inspect)
    assert plugins.get_on_assembly() is inspect
    Flowable.range(0, 3).map(str).filter(bool).test().assert_result("0", "1", "2").assert_no_violations()
    assert len(seen) == 3
    plugins.set_on_assembly(None)
    Flowable.range(0, 3).map(str)
    assert len(seen) == 3
    assert "__wrapped__" not in vars(Flowable.map)


def test_assembly_hook_can_wrap_with_operators_without_recursing() -> None:
    subscribed: list[str] = []

    def announce(f: Flowable[Any]) -> Flowable[Any]:
        name = type(f).__name__
        return f.do_on_subscribe(lambda s: subscribed.append(name))

    plugins.set_on_assembly(announce)
    Flowable.range(0, 3).map(str).hide().test().assert_result("0", "1", "2").assert_no_violations()
    assert len(subscribed) == 3


def test_assembly_hook_with_tracing_gets_the_traced_stage() -> None:
    got: list[Flowable[Any]] = []
    plugins.set_on_assembly(lambda f: got.append(f) or f)
    plugins.enable_assembly_tracing()
    ts = Flowable.just(0).map(lambda x: 1 // x).test()
    ts.assert_error(ZeroDivisionError).assert_no_violations()
    assert "test_hooks.py" in repr(got[-1])
    plugins.reset()
    assert plugins.get_on_assembly() is None and not plugins.assembly_tracing_enabled()


def test_assembly_hook_must_be_callable() -> None:
    with pytest.raises(TypeError):
        plugins.set_on_assembly(42)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ schedule hook

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("REQUEST_ID", default="-")


def carrying(log: list[tuple[str, str]]) -> Callable[[Callable[[], object]], Callable[[], object]]:
    """A hook that carries a thread-local 'span' from the scheduling thread to the running one."""
    local = threading.local()

    def hook(task: Callable[[], object]) -> Callable[[], object]:
        span = getattr(local, "span", "none")

        def run() -> object:
            log.append((span, threading.current_thread().name))
            return task()

        return run

    local.span = "request-7"
    return hook


@pytest.mark.parametrize(
    "make",
    [schedulers.single, schedulers.new_thread, schedulers.io, schedulers.computation, schedulers.trampoline, schedulers.immediate],
    ids=["single", "new_thread", "io", "computation", "trampoline", "immediate"],
)
def test_schedule_hook_wraps_tasks_of_every_scheduler(make: Callable[[], schedulers.Scheduler]) -> None:
    log: list[tuple[str, str]] = []
    plugins.set_on_schedule(carrying(log))
    ts = Flowable.range(0, 50).subscribe_on(make()).test().await_done()
    ts.assert_value_count(50).assert_complete().assert_no_violations()
    assert log and all(span == "request-7" for span, _ in log)


def test_schedule_hook_on_periodic_and_delayed_tasks_of_the_test_scheduler() -> None:
    log: list[tuple[str, str]] = []
    plugins.set_on_schedule(carrying(log))
    sched = TestScheduler()
    ts = Flowable.interval(1.0, scheduler=sched).take(3).test()
    sched.advance_by(3.0)
    ts.assert_result(0, 1, 2).assert_no_violations()
    assert len(log) >= 3


def test_schedule_hook_on_the_asyncio_scheduler() -> None:
    log: list[tuple[str, str]] = []

    async def main() -> list[int]:
        plugins.set_on_schedule(carrying(log))
        return await Flowable.range(0, 5).observe_on(AsyncioScheduler()).to_list()

    assert asyncio.run(main()) == [0, 1, 2, 3, 4]
    assert log


def test_a_raising_schedule_hook_is_reported_and_the_task_still_runs(undeliverable: list[BaseException]) -> None:
    def broken(task: Callable[[], object]) -> Callable[[], object]:
        raise RuntimeError("hook bug")

    plugins.set_on_schedule(broken)
    ts = Flowable.range(0, 3).subscribe_on(schedulers.single()).test().await_done()
    ts.assert_result(0, 1, 2).assert_no_violations()
    assert undeliverable and all(isinstance(e, RuntimeError) for e in undeliverable)


def test_reset_and_none_remove_the_schedule_hook() -> None:
    log: list[tuple[str, str]] = []
    plugins.set_on_schedule(carrying(log))
    assert plugins.get_on_schedule() is not None
    plugins.reset()
    assert plugins.get_on_schedule() is None
    Flowable.range(0, 3).subscribe_on(schedulers.single()).test().await_done().assert_result(0, 1, 2)
    assert log == []
    with pytest.raises(TypeError):
        plugins.set_on_schedule("nope")  # type: ignore[arg-type]
