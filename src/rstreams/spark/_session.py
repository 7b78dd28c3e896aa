"""Getting a SparkSession: embedded ``local[*]`` by default, a cluster one master URL away."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from typing import Any

__all__ = ["session", "SparkUnavailableError", "check_java", "DEFAULT_CONF"]


class SparkUnavailableError(RuntimeError):
    """Spark cannot start here: no Java 17, or pyspark/pyarrow missing. The message says how to fix it."""


#: Settings applied to sessions this module builds (each may be overridden through ``**conf``).
DEFAULT_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.sql.shuffle.partitions": "4",
    # local mode: the driver JVM is also the executor; 1g (Spark's default) loses large task results
    # from the block manager under caching (TaskResultLost) - only applied when this module starts the JVM
    "spark.driver.memory": "2g",
}


#: Added for ``local`` masters (one JVM): a task result over 1 MB (a partition's Arrow batches) would
#: otherwise travel through the block manager, where local mode can lose it (TaskResultLost); in one
#: JVM a direct result is just an in-process message.
LOCAL_CONF: dict[str, str] = {
    "spark.task.maxDirectResultSize": str(256 * 1024 * 1024),
    "spark.rpc.message.maxSize": "256",
}


def check_java() -> str:
    """Return the path of ``java`` (Java 17+), or raise :class:`SparkUnavailableError`.

    Example::

        spark.check_java()      # '/usr/bin/java' (or $JAVA_HOME/bin/java)
    """
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if java_home and java is not None and not os.path.exists(java):
        raise SparkUnavailableError(
            f"rstreams.spark needs Java 17: JAVA_HOME={java_home!r} has no bin/java (Spark uses JAVA_HOME "
            "over PATH). Point JAVA_HOME at a Java 17 installation or unset it."
        )
    if not java or not os.path.exists(java):
        raise SparkUnavailableError(
            "rstreams.spark needs Java 17 (the only system requirement of Spark): no `java` on PATH "
            "and no JAVA_HOME. Install it, e.g. `apt-get install -y openjdk-17-jre-headless`."
        )
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SparkUnavailableError(f"rstreams.spark: `{java} -version` failed: {e}") from e
    text = out.stderr + out.stdout
    if out.returncode != 0:  # a broken install: say so here rather than through a JVM stack trace
        raise SparkUnavailableError(
            f"rstreams.spark: `{java} -version` exited with {out.returncode}: {text.strip()[:300]}"
        )
    major = _java_major(text)
    if major is not None and major < 17:
        raise SparkUnavailableError(
            f"rstreams.spark needs Java 17 or newer; `{java}` is Java {major}. Set JAVA_HOME to a Java 17."
        )
    return java


def _java_major(version_text: str) -> int | None:
    import re

    m = re.search(r'version "(\d+)(?:\.(\d+))?', version_text)
    if not m:
        return None
    first = int(m.group(1))
    if first == 1 and m.group(2):
        return int(m.group(2))
    return first


def _require_pyspark() -> Any:
    try:
        import pyspark  # noqa: F401
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise SparkUnavailableError(
            "rstreams.spark needs the `spark` extra: pip install 'rstreams[spark]' (pyspark, pyarrow, pandas<3)"
        ) from e
    return SparkSession


def _connect_session(SparkSession: Any, url: str, conf: dict[str, Any]) -> Any:
    """A Spark Connect session: only the client runs here (no Java needed); the server's static
    settings are its own, so only runtime SQL settings (ours, then the caller's) are sent."""
    try:
        import pyspark.sql.connect.session  # noqa: F401  (needs pyspark[connect]: grpcio, ...)
    except ImportError as e:
        raise SparkUnavailableError(
            f"rstreams.spark: {url} is a Spark Connect URL, which needs pyspark's connect extra: "
            f"pip install 'pyspark[connect]' ({e})"
        ) from e
    builder = SparkSession.builder.remote(url)
    settings = {k: v for k, v in DEFAULT_CONF.items() if k.startswith("spark.sql.")}
    for k, v in conf.items():
        key = k if "." in k else k.replace("_", ".")
        settings[key] = str(v).lower() if isinstance(v, bool) else str(v)
    try:
        s = builder.getOrCreate()
    except Exception as e:
        raise SparkUnavailableError(f"rstreams.spark: cannot reach Spark Connect at {url} ({type(e).__name__}: {str(e)[:300]})") from e
    for k, v in settings.items():
        try:
            s.conf.set(k, v)
        except Exception as e:
            raise ValueError(
                f"rstreams.spark: the Spark Connect server refused the setting {k}={v!r} (only runtime "
                f"settings can be changed from a client): {str(e)[:200]}"
            ) from e
    return s


def _running_session(SparkSession: Any) -> Any:
    """The session of this thread, else the process's default one (getActiveSession() is per JVM
    thread: from a thread other than the one that built the session it returns None)."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    default = getattr(SparkSession, "_instantiatedSession", None)
    sc = getattr(default, "_sc", None)
    if default is not None and sc is not None and getattr(sc, "_jsc", None) is not None:
        return default
    return None


def session(master: str | None = None, app_name: str = "rstreams", **conf: Any) -> Any:
    """Return the active SparkSession, or build one.

    A session already running in this process (of this thread, or the default one) is returned as
    is; the ``conf`` given here is applied to it where Spark allows it at runtime, and a different
    ``master`` only warns. ``master`` defaults to ``$SPARK_MASTER`` or ``local[*]``; ``conf`` keys
    use underscores or dots (``spark_sql_shuffle_partitions=8`` == ``"spark.sql.shuffle.partitions": 8``). Arrow is enabled
    and the UI is off unless asked (``spark_ui_enabled="true"``).

    Example::

        from rstreams import spark
        s = spark.session()                      # embedded local[*]
        s = spark.session("spark://host:7077")   # a cluster
        s = spark.session("sc://host:15002")     # a Spark Connect server (no local JVM)

    Over Spark Connect, ``from_dataframe`` uses its ``mapInArrow`` transport, ``to_spark`` and
    ``run_on_spark`` work as on a classic session (``to_spark``'s ``path`` must be on a file system
    that this process and the server share); ``from_stream`` needs a classic session (its
    ``foreachBatch`` callback must run in this process).
    """
    SparkSession = _require_pyspark()
    if master is not None and master.startswith("sc://"):
        return _connect_session(SparkSession, master, conf)
    active = _running_session(SparkSession)
    if active is not None:
        # a running session is reused as is (pyspark would re-apply DEFAULT_CONF to it through
        # builder.getOrCreate(), overriding what its owner set); only settings the caller passes
        # here are applied, and a different master cannot be had without stopping it first
        try:
            running = active.sparkContext.master if master is not None else None
        except Exception:  # a Spark Connect session has no SparkContext
            running = "a Spark Connect server"
        if master is not None and master != running:
            warnings.warn(
                f"rstreams.spark.session({master!r}): a SparkSession with master {running!r} is already "
                "running in this process and is returned; stop it first to use another master",
                stacklevel=2,
            )
        for k, v in conf.items():
            key = k if "." in k else k.replace("_", ".")
            value = str(v).lower() if isinstance(v, bool) else str(v)
            if active.conf.isModifiable(key):
                active.conf.set(key, value)
            elif active.conf.get(key, None) != value:
                warnings.warn(
                    f"rstreams.spark.session(): {key}={value!r} is not applied: a SparkSession is already "
                    "running and the setting can only be given when one starts",
                    stacklevel=2,
                )
        return active
    check_java()
    # executors must run this interpreter (with pyarrow), not whatever python3 is on PATH
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    resolved = master or os.environ.get("SPARK_MASTER", "local[*]")
    builder = SparkSession.builder.appName(app_name).master(resolved)
    settings = dict(DEFAULT_CONF)
    if resolved.startswith("local[") or resolved == "local":
        settings.update(LOCAL_CONF)
    settings.setdefault("spark.sql.warehouse.dir", os.path.join(tempfile.gettempdir(), "rstreams-warehouse"))
    for k, v in conf.items():
        key = k if "." in k else k.replace("_", ".")
        settings[key] = str(v).lower() if isinstance(v, bool) else str(v)
    # an OutOfMemoryError must end the driver JVM, never leave it half alive with py4j calls that
    # are never answered: the exit is then seen within seconds (JvmWatchdog, closed sockets)
    opts = settings.get("spark.driver.extraJavaOptions", "")
    if "OutOfMemoryError" not in opts:
        settings["spark.driver.extraJavaOptions"] = (opts + " -XX:+ExitOnOutOfMemoryError").strip()
    for k, v in settings.items():
        builder = builder.config(k, v)
    try:
        s = builder.getOrCreate()
    except Exception as e:  # a JVM that fails to start: say why in one line
        raise SparkUnavailableError(f"rstreams.spark: Spark failed to start ({type(e).__name__}: {str(e)[:300]})") from e
    s.sparkContext.setLogLevel("ERROR")
    return s
