"""The driver JVM's health, seen from Python: a dead JVM is an error within seconds, never a hang.

A classic PySpark session talks to its driver JVM over py4j. When that JVM exits (killed, or an
``OutOfMemoryError`` with ``-XX:+ExitOnOutOfMemoryError``, which :func:`~rstreams.spark.session`
sets), a py4j call in flight usually fails at once because the socket closes; but a thread that
waits for something else (a socket served by the JVM, a queue filled by a Spark job, a future)
would wait forever. :class:`JvmWatchdog` polls the JVM process and calls back once it is gone, so
such waits can be turned into errors.

Spark Connect sessions have no local JVM: nothing is watched there (the gRPC channel reports a
dead server itself).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..errors import RStreamsError

__all__ = ["SparkJvmDiedError", "JvmWatchdog", "driver_jvm_process", "jvm_exit_code", "dead_jvm_error"]


class SparkJvmDiedError(RStreamsError, RuntimeError):
    """The Spark driver JVM exited while rstreams was using it (killed, or out of memory)."""

    def __init__(self, what: str, pid: int | None, code: int | None) -> None:
        self.what = what
        self.pid = pid
        self.code = code
        how = f"exit code {code}" if code is not None else "no exit code"
        super().__init__(
            f"{what}: the Spark driver JVM (pid {pid}) exited ({how}); a JVM that ran out of heap exits "
            "this way (-XX:+ExitOnOutOfMemoryError). Raise spark.driver.memory or lower the batch size, "
            "then start a new session."
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.what, self.pid, self.code))


def driver_jvm_process(spark: Any) -> Any:
    """The ``Popen`` of the driver JVM this process launched for ``spark`` (a classic session), or
    None (Spark Connect, or a JVM this process did not start)."""
    try:
        sc = spark.sparkContext
    except Exception:  # Spark Connect: no SparkContext here
        return None
    gateway = getattr(sc, "_gateway", None)
    proc = getattr(gateway, "proc", None)
    return proc if proc is not None and hasattr(proc, "poll") else None


def jvm_exit_code(spark: Any) -> tuple[int | None, int | None] | None:
    """``(pid, exit code)`` when the driver JVM of ``spark`` has exited, else None (alive or unknown)."""
    proc = driver_jvm_process(spark)
    if proc is None:
        return None
    code = proc.poll()
    return None if code is None else (getattr(proc, "pid", None), code)


def dead_jvm_error(spark: Any, what: str, grace: float = 2.0) -> SparkJvmDiedError | None:
    """A :class:`SparkJvmDiedError` when the driver JVM of ``spark`` has exited, else None (alive,
    or not a JVM this process started).

    Meant for the moment a socket or py4j call to the JVM has just failed: a JVM that dies closes
    its sockets a little before the OS reports it exited, so this waits up to ``grace`` seconds
    for the exit before saying the JVM is alive (a failure with a living JVM pays that wait once).
    """
    proc = driver_jvm_process(spark)
    if proc is None:
        return None
    try:
        code = proc.wait(timeout=grace) if grace > 0 else proc.poll()
    except Exception:  # subprocess.TimeoutExpired: still running
        return None
    return None if code is None else SparkJvmDiedError(what, getattr(proc, "pid", None), code)


class JvmWatchdog:
    """Polls the driver JVM every ``interval`` seconds on a daemon thread; calls ``on_death`` once
    with a :class:`SparkJvmDiedError` if it exits before :meth:`stop`. A no-op without a local JVM.

    Example::

        dog = JvmWatchdog(spark, "to_spark", lambda e: sink.fail(e)).start()
        try:
            ...  # py4j calls, waits on Spark jobs
        finally:
            dog.stop()
    """

    def __init__(self, spark: Any, what: str, on_death: Callable[[SparkJvmDiedError], None], interval: float = 0.5) -> None:
        self._proc = driver_jvm_process(spark)
        self._what = what
        self._on_death = on_death
        self._interval = interval
        # set by stop(): the thread's wait ends at once (an Event is the thread-safe stop flag)
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> JvmWatchdog:
        if self._proc is not None and self._thread is None:
            t = threading.Thread(target=self._run, name="rstreams-jvm-watchdog", daemon=True)
            self._thread = t
            t.start()
        return self

    def stop(self) -> None:
        self._stopped.set()

    def _run(self) -> None:
        proc = self._proc
        while not self._stopped.wait(self._interval):
            code = proc.poll()
            if code is not None:
                if not self._stopped.is_set():
                    self._on_death(SparkJvmDiedError(self._what, getattr(proc, "pid", None), code))
                return
