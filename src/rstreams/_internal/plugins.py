"""Global hooks: the undeliverable-error hook and the scheduled-task hook.

An error that cannot be delivered downstream (it arrived after a cancel or a terminal signal, or a
Subscriber raised from a signal method, rule 2.13) is never dropped silently: it goes to
:func:`on_error`, whose default logs it with its traceback at ERROR level on the ``rstreams`` logger.

Example::

    from rstreams import plugins
    seen = []
    plugins.set_error_handler(seen.append)
    ...
    plugins.set_error_handler(None)   # back to logging

    with plugins.collect_errors() as errors:   # for tests
        ...
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import UndeliverableError

__all__ = [
    "collect_errors",
    "get_error_handler",
    "get_schedule_hook",
    "on_error",
    "on_schedule",
    "set_error_handler",
    "set_schedule_hook",
]

_log = logging.getLogger("rstreams")

ErrorHandler = Callable[[BaseException], None]

# Guards swapping the handler (readers take a snapshot: a plain attribute read of a tuple).
_lock = threading.Lock()
_handler: ErrorHandler | None = None


def _default_handler(error: BaseException) -> None:
    _log.error("%s", error, exc_info=(type(error), error, error.__traceback__))


def set_error_handler(handler: ErrorHandler | None) -> None:
    """Install ``handler`` for undeliverable errors; ``None`` restores the logging default.

    Example::

        seen = []
        plugins.set_error_handler(seen.append)
        plugins.on_error(ValueError("late"))
        seen[0].cause                                  # ValueError('late'), in an UndeliverableError
        plugins.set_error_handler(None)
    """
    global _handler
    if handler is not None and not callable(handler):
        raise TypeError(
            f"set_error_handler(): the handler must be a callable taking the error, or None, "
            f"got {type(handler).__name__}"
        )
    with _lock:
        _handler = handler


def get_error_handler() -> ErrorHandler | None:
    """The installed handler, or ``None`` when the logging default is in force.

    Example::

        plugins.get_error_handler()                    # None
        plugins.set_error_handler(print)
        plugins.get_error_handler() is print           # True
    """
    return _handler


def on_error(error: BaseException, context: str = "") -> None:
    """Report an undeliverable error. Never raises (a failing handler falls back to logging).

    Errors that are not already :class:`~rstreams.errors.UndeliverableError` are wrapped in one.

    Example::

        with plugins.collect_errors() as errors:
            plugins.on_error(ValueError("late"), "after cancel")
        errors                                         # [ValueError('late')]
    """
    if not isinstance(error, BaseException):  # a caller's bug: report it rather than raise here
        error = TypeError(f"plugins.on_error() expects an exception, got {error!r} (rule 2.13)")
    if not isinstance(error, UndeliverableError):
        error = UndeliverableError(error, context)
    handler = _handler
    if handler is None:
        _default_handler(error)
        return
    try:
        handler(error)
    except BaseException as handler_error:  # noqa: BLE001 - the hook must never raise
        _default_handler(error)
        _default_handler(UndeliverableError(handler_error, "the undeliverable-error handler raised"))


@contextmanager
def collect_errors() -> Iterator[list[BaseException]]:
    """Collect undeliverable errors into a list for the duration of the ``with`` block (tests).

    The original errors are collected (the ``UndeliverableError`` wrapper is unwrapped).

    Example::

        with plugins.collect_errors() as errors:
            Flowable.error(ValueError("boom")).subscribe(print)   # no on_error callback
        errors                                 # [OnErrorNotImplementedError('the stream failed ...')]
    """
    collected: list[BaseException] = []
    collected_lock = threading.Lock()

    def collect(error: BaseException) -> None:
        cause = error.cause if isinstance(error, UndeliverableError) else error
        with collected_lock:
            collected.append(cause)

    global _handler
    with _lock:  # race: another thread swaps the handler between our read and our write
        previous = _handler
        _handler = collect
    try:
        yield collected
    finally:
        set_error_handler(previous)


# ---------------------------------------------------------------------------------------------
# Scheduled tasks: every Worker.schedule (and the immediate worker's periodic loop) passes its task
# through on_schedule, so a hook can wrap it (carry a tracing context, time it, name it). Off (no
# hook), on_schedule is one global read.

ScheduleHook = Callable[[Callable[[], object]], Callable[[], object]]

_schedule_hook: ScheduleHook | None = None


def set_schedule_hook(hook: ScheduleHook | None) -> None:
    """Install ``hook`` (task -> task to run instead) for every task scheduled from now on."""
    global _schedule_hook
    if hook is not None and not callable(hook):
        raise TypeError(f"set_on_schedule(): the hook must be a callable or None, got {type(hook).__name__}")
    with _lock:
        _schedule_hook = hook


def get_schedule_hook() -> ScheduleHook | None:
    """The installed scheduled-task hook, or None."""
    return _schedule_hook


def on_schedule(task: Any) -> Any:
    """The task a worker should run in place of ``task``: the hook's wrapper, or ``task`` itself.

    A hook that raises or returns a non-callable is reported (:func:`on_error`) and ``task`` runs
    unwrapped: scheduling never fails because of a hook.
    """
    hook = _schedule_hook
    if hook is None:
        return task
    try:
        wrapped = hook(task)
    except Exception as e:  # noqa: BLE001 - reported; the task still runs
        on_error(e, "the on_schedule hook raised")
        return task
    if not callable(wrapped):
        on_error(TypeError(f"the on_schedule hook returned {type(wrapped).__name__}, not a callable"))
        return task
    return wrapped
