"""Global hooks: undeliverable errors, assembly tracing, the assembly and scheduled-task hooks.

Everything here is process-wide state: installing a hook or switching tracing on affects every
pipeline assembled afterwards, in every thread. Tests restore the defaults with :func:`reset`.

Example::

    from rstreams import plugins
    with plugins.collect_errors() as errors:
        ...
    assert not errors

    plugins.enable_assembly_tracing()     # or RSTREAMS_ASSEMBLY_TRACING=1 before importing rstreams
    ...                                   # errors now carry notes such as "at .map(parse) (etl.py:42)"
    plugins.reset()                       # every hook back to its default, tracing off
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._internal.plugins import (
    collect_errors,
    get_error_handler,
    get_schedule_hook,
    on_error,
    set_error_handler,
    set_schedule_hook,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from .flowable import Flowable

__all__ = [
    "assembly_tracing_enabled",
    "collect_errors",
    "disable_assembly_tracing",
    "enable_assembly_tracing",
    "get_error_handler",
    "get_on_assembly",
    "get_on_schedule",
    "on_error",
    "reset",
    "set_error_handler",
    "set_on_assembly",
    "set_on_schedule",
]


def enable_assembly_tracing() -> None:
    """Record where each stage is assembled; errors passing through a stage get a note naming it.

    Off by default (``RSTREAMS_ASSEMBLY_TRACING=1`` in the environment switches it on at import).
    Applies to Flowables assembled after the call. Off, it costs nothing; on, one frame look-up per
    assembled stage and one pass-through call per element per stage (fused synchronous chains stay
    fused). The note reads ``at .map(parse) (etl.py:42)``: the operator, its function and the
    user's line that built it, from the stage that raised down to the subscriber.

    Example::

        plugins.enable_assembly_tracing()
        ts = Flowable.just("1", "x").map(int).test()
        ts.errors[0].__notes__          # ['at .map(int) (etl.py:2)']
        plugins.disable_assembly_tracing()
    """
    from .flowable import lowlevel

    lowlevel.set_tracing(True)


def disable_assembly_tracing() -> None:
    """Stop recording assembly sites (stages assembled while it was on keep theirs).

    Example::

        plugins.enable_assembly_tracing()
        traced = Flowable.just("x").map(int)      # keeps its site
        plugins.disable_assembly_tracing()
        plugins.assembly_tracing_enabled()         # False
    """
    from .flowable import lowlevel

    lowlevel.set_tracing(False)


def assembly_tracing_enabled() -> bool:
    """Whether assembly tracing is on.

    Example::

        plugins.enable_assembly_tracing()
        plugins.assembly_tracing_enabled()         # True
    """
    from .flowable import lowlevel

    return lowlevel.tracing_enabled()


def set_on_assembly(hook: Callable[[Flowable[Any]], Flowable[Any]] | None) -> None:
    """Call ``hook`` with every Flowable a public ``Flowable`` method or factory returns.

    The hook returns the Flowable it was given (to inspect it) or one that stands in for it (to
    wrap it); a stand-in must offer the same interface (``publish()`` returns a
    ConnectableFlowable). It runs at assembly, on the assembling thread, for the library's own
    assemblies too, but not for the Flowables the hook assembles itself (so ``lambda f:
    f.do_on_subscribe(...)`` does not recurse). ``None`` removes it. Off (no hook), assembly
    costs nothing extra.

    Example::

        built = []
        plugins.set_on_assembly(lambda f: built.append(f) or f)   # inspect, return it unchanged
        Flowable.range(0, 3).map(str)
        len(built)                                                # 2: range(...) and .map(str)
        plugins.set_on_assembly(None)
    """
    from .flowable import lowlevel

    lowlevel.set_assembly_hook(hook)


def get_on_assembly() -> Callable[[Flowable[Any]], Flowable[Any]] | None:
    """The installed assembly hook, or None.

    Example::

        plugins.get_on_assembly()                  # None
        plugins.set_on_assembly(hook)
        plugins.get_on_assembly() is hook          # True
    """
    from .flowable import lowlevel

    return lowlevel.assembly_hook()


def set_on_schedule(hook: Callable[[Callable[[], object]], Callable[[], object]] | None) -> None:
    """Pass every task given to a scheduler's worker through ``hook``; it returns the task to run.

    Called on the scheduling thread at schedule time (each run of a periodic task is scheduled
    anew), so a wrapper can capture what the scheduling thread knows (a tracing span, a request
    id) and restore it on the worker's thread. Every scheduler of :mod:`rstreams.schedulers`, the
    ``TestScheduler`` and the asyncio scheduler honour it. A hook that raises is reported to
    :func:`on_error` and the task runs unwrapped. ``None`` removes it.

    Example::

        def timed(task):
            def run():
                t0 = time.perf_counter()
                try:
                    task()
                finally:
                    durations.append(time.perf_counter() - t0)
            return run
        plugins.set_on_schedule(timed)
    """
    set_schedule_hook(hook)


def get_on_schedule() -> Callable[[Callable[[], object]], Callable[[], object]] | None:
    """The installed scheduled-task hook, or None.

    Example::

        plugins.get_on_schedule()                  # None
        plugins.set_on_schedule(hook)
        plugins.get_on_schedule() is hook          # True
    """
    return get_schedule_hook()


def reset() -> None:
    """Every hook back to its default: logging error handler, no assembly or schedule hook, tracing off.

    Example::

        plugins.enable_assembly_tracing()
        plugins.set_error_handler(print)
        plugins.reset()
        plugins.assembly_tracing_enabled(), plugins.get_error_handler()   # (False, None)
    """
    set_error_handler(None)
    set_schedule_hook(None)
    from .flowable import lowlevel

    lowlevel.set_assembly_hook(None)
    lowlevel.set_tracing(False)
