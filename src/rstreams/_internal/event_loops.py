"""Which event loop the asyncio bridge runs on, and how to reach it from any thread.

Toolkit of the layers that touch asyncio: the flowable layer's bridge (``async for``, ``await``,
``map_async``, ``from_async_iterable``, ``from_future`` and the blocking bridges), the
``AsyncioScheduler`` in ``rstreams.schedulers`` and the public ``rstreams.aio`` (which re-exports
:func:`background_loop`, :func:`stop_background_loop` and :class:`LoopClosedError`). Importing it
imports asyncio, so only modules loaded on first use import it.

* :func:`background_loop` is a shared event loop running forever on one daemon thread named
  ``rstreams-aio-loop``, started lazily on first use (and restarted if it was stopped). Sources and
  async mappers subscribed from a thread with no running loop run their coroutines there.
* :func:`resolve_loop` picks the loop for a subscription: the one given, else the running loop of
  the subscribing thread, else the background loop.
* :func:`on_loop` tells whether the calling thread is the loop's own thread (one C call:
  ``asyncio._get_running_loop()``); the bridge then uses ``call_soon``/direct calls and skips
  ``call_soon_threadsafe`` (which takes a lock and writes to the loop's self-pipe).
* :func:`call_soon_any` runs a callback on the loop from any thread.

Race guarded: two threads asking for the background loop at once must get the same loop, so the
lazy start happens under ``_lock`` (a plain lock, taken once per subscription, never per item).
"""

from __future__ import annotations

import asyncio
import threading
from asyncio import AbstractEventLoop
from asyncio.events import _get_running_loop
from collections.abc import Callable
from typing import Any

__all__ = ["background_loop", "resolve_loop", "on_loop", "call_soon_any", "LoopClosedError"]

_lock = threading.Lock()  # race: two threads starting the background loop at once
_loop: AbstractEventLoop | None = None
_thread: threading.Thread | None = None


class LoopClosedError(RuntimeError):
    """The event loop a stream runs on was closed or stopped; the stream cannot continue."""


def background_loop() -> AbstractEventLoop:
    """The shared background event loop (daemon thread ``rstreams-aio-loop``), started lazily.

    Example::

        loop = aio.background_loop()
        asyncio.run_coroutine_threadsafe(asyncio.sleep(0, "done"), loop).result()   # 'done'
    """
    global _loop, _thread
    loop = _loop
    t = _thread
    if loop is not None and t is not None and t.is_alive() and not loop.is_closed():
        return loop
    with _lock:
        if _loop is not None and _thread is not None and _thread.is_alive() and not _loop.is_closed():
            return _loop
        loop = asyncio.new_event_loop()
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(started.set)
            try:
                loop.run_forever()
            finally:
                try:
                    loop.run_until_complete(loop.shutdown_asyncgens())
                finally:
                    loop.close()

        t = threading.Thread(target=run, name="rstreams-aio-loop", daemon=True)
        t.start()
        started.wait(5.0)
        _loop, _thread = loop, t
        return loop


def stop_background_loop(timeout: float = 2.0) -> None:
    """Stop the background loop thread (it restarts lazily on next use). Mostly for tests.

    Example::

        aio.from_coroutine(fetch).blocking_first()   # starts the rstreams-aio-loop thread
        aio.stop_background_loop()                   # stops it; the next use starts it again
    """
    global _loop, _thread
    with _lock:
        loop, t = _loop, _thread
        _loop = _thread = None
    if loop is not None and not loop.is_closed():
        try:
            loop.call_soon_threadsafe(loop.stop)
        except RuntimeError:
            pass
    if t is not None:
        t.join(timeout)


# The event loop a blocking bridge (blocking_first, blocking_iterable, ...) hid while it subscribes
# on that loop's own thread: the thread is about to block, so nothing can run on that loop until
# the bridge returns. Thread-local: it describes the calling thread only.
_blocking = threading.local()


def hidden_by_blocking_bridge() -> AbstractEventLoop | None:
    """The loop this thread runs but is about to block (set by the blocking bridges), or None."""
    return getattr(_blocking, "loop", None)


def set_hidden_by_blocking_bridge(loop: AbstractEventLoop | None) -> None:
    _blocking.loop = loop


def resolve_loop(loop: AbstractEventLoop | None = None) -> AbstractEventLoop:
    """``loop`` if given, else the calling thread's running loop, else the background loop."""
    if loop is not None:
        return loop
    running = _get_running_loop()
    if running is not None:
        return running
    return background_loop()


def on_loop(loop: AbstractEventLoop) -> bool:
    """True if the calling thread is running ``loop`` right now."""
    return _get_running_loop() is loop


def call_soon_any(loop: AbstractEventLoop, fn: Callable[..., Any], *args: Any) -> None:
    """Run ``fn(*args)`` on ``loop``: ``call_soon`` from its own thread, ``call_soon_threadsafe``
    from any other. Raises :class:`LoopClosedError` if the loop is closed."""
    try:
        if _get_running_loop() is loop:
            loop.call_soon(fn, *args)
        else:
            loop.call_soon_threadsafe(fn, *args)
    except RuntimeError as e:  # "Event loop is closed"
        raise LoopClosedError(f"rstreams.aio: the event loop {loop!r} is closed") from e
