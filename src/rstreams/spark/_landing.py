"""The on-disk protocol of a landing: what ``to_spark`` writes next to the data, and why.

Layout of a landed path (everything rstreams adds starts with ``_``, which Spark and pyarrow skip)::

    <path>/part-<token>-b<batch>-*.parquet       the data files of committed batches
    <path>/_spark_metadata/<n>[.compact]         Spark's own file-sink log: the files readers see
    <path>/_rstreams/lock                        the path lock (held for milliseconds per commit)
    <path>/_rstreams/schema/<v>.json             the path's schema, versioned
    <path>/_rstreams/landings/<name>/lease       held (flock) by the one live writer of the landing
    <path>/_rstreams/landings/<name>/landing.json   token, mode, when it started
    <path>/_rstreams/landings/<name>/commits/<batch>.json   the landing's commit log
    <path>/_rstreams/landings/<name>/staging/batch-<batch>/  files written, not yet published
    <path>/_rstreams/landings/<name>/_COMPLETE   a landing that ran to on_complete

One batch, in order: (1) its files are written into its staging directory; (2) its commit entry
(rows ``[start, end)`` of the landing's input, the file names, two row digests) is written
atomically: from here on the batch is committed; (3) the files are renamed into ``<path>``;
(4) one entry listing them is appended to ``_spark_metadata``, the log Spark's Structured
Streaming file sink keeps: a batch read (``spark.read.parquet(path)``), a catalog table over the
path and a file stream source (:func:`~rstreams.spark.landed_stream`) all list the files through
it, so they see every committed batch whole or not at all, whatever the moment (a log entry
appears with one atomic ``link``); (5) the staging directory is removed. A crash between any two
steps leaves a state the next start rolls forward (2-5 redone, each idempotent) or back (a staged
batch with no commit entry is deleted); whichever landing starts next in the path does it for a
dead one, so committed rows never stay invisible.

Identity: a landing is a name. A new name is a new landing; the same name resumes it (rows
``[0, end)`` of the committed batches are skipped, checked against the digests) or, when it
completed, lands nothing. One writer per name at a time: the lease is an ``flock`` that the kernel
drops when its holder dies, so a crashed writer never keeps it.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from ..errors import RStreamsError

__all__ = [
    "SinkWriteError",
    "LandingInUseError",
    "SchemaMismatchError",
    "InputMismatchError",
    "Landing",
    "SparkFileLog",
    "PathLock",
    "row_digest",
    "fault_point",
]

CONTROL_DIR: Final = "_rstreams"
METADATA_DIR: Final = "_spark_metadata"
#: Spark's default ``spark.sql.streaming.fileSink.log.compactInterval``
DEFAULT_COMPACT_INTERVAL: Final = 10
#: how long a writer waits for the path lock (held for milliseconds by a live writer) or for a
#: landing's lease held by another process that is only recovering it
LOCK_WAIT_SECONDS: Final = 60.0


class SinkWriteError(RStreamsError, RuntimeError):
    """A landing failed: says which batch, which rows are committed and how to resume.

    ``batch_id`` is None when no batch was involved (the landing could not start). ``landing`` is
    the landing's name: re-running the same input with ``to_spark(..., name=landing)`` resumes
    exactly after the last committed row.
    """

    def __init__(
        self,
        batch_id: int | None,
        start_row: int,
        end_row: int,
        committed_rows: int,
        cause: BaseException | None,
        landing: str | None = None,
        step: str = "write",
        detail: str | None = None,
    ) -> None:
        self.batch_id = batch_id
        self.start_row = start_row
        self.end_row = end_row
        self.committed_rows = committed_rows
        self.cause = cause
        self.landing = landing
        self.step = step
        self.detail = detail
        who = f"to_spark(name={landing!r})" if landing else "to_spark"
        if batch_id is None:
            what = f"{who} failed at the {step} step"
        else:
            what = f"{who}: micro-batch {batch_id} (rows {start_row}..{end_row - 1}) failed at the {step} step"
        why = detail if detail is not None else (f"{type(cause).__name__}: {cause}" if cause is not None else "")
        done = (
            f"Rows 0..{committed_rows - 1} are committed and visible; rows"
            if committed_rows
            else "No row is committed; rows"
        )
        if step == "publish" and batch_id is not None and committed_rows:
            # the batch is committed, but readers list it only once it is published: by the
            # re-run, or by whichever landing starts next in the path (not "visible" yet)
            done = (
                f"Rows 0..{committed_rows - 1} are committed; those of micro-batch {batch_id} become visible "
                "when the re-run (or the next landing into the path) publishes them; rows"
            )
        if step == "resume":
            resume = ""
        elif step == "convert":
            resume = (
                " Nothing of this batch was written: fix those rows (or pass schema= / merge_schema=True), then "
                + (f"re-run with name={landing!r} to resume there." if landing else "re-run.")
            )
        else:
            resume = (
                f" Re-run the same input with name={landing!r} to resume exactly there."
                if landing
                else " Re-run the same input to resume."
            )
        super().__init__(f"{what}: {why}. {done} from {committed_rows} on were not landed.{resume}")
        if cause is not None:
            self.__cause__ = cause

    def __reduce__(self) -> tuple[Any, ...]:
        # picklable (process pools, Spark's error reporting): rebuilt from its fields
        return (
            type(self),
            (self.batch_id, self.start_row, self.end_row, self.committed_rows, self.cause, self.landing, self.step, self.detail),
        )


class LandingInUseError(SinkWriteError):
    """Another live writer holds the landing (one writer per name); ``holder`` says who."""

    def __init__(self, landing: str, holder: str, committed_rows: int = 0) -> None:
        self.holder = holder
        super().__init__(
            None, 0, 0, committed_rows, None, landing, "start",
            f"the landing is being written by another writer ({holder}); one writer per landing name "
            "(use another name for a separate landing into the same path)",
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.landing, self.holder, self.committed_rows))


class SchemaMismatchError(SinkWriteError, ValueError):
    """A row or batch does not fit the landing's schema (nothing of that batch was committed)."""


class InputMismatchError(SinkWriteError, ValueError):
    """A re-run of a named landing got an input that differs from what that landing committed."""


# -- fault injection ---------------------------------------------------------------------------
def fault_point(step: str, batch_id: int) -> None:
    """Crash here (``os._exit(70)``) when ``RSTREAMS_SINK_FAULT`` is ``"<step>:<batch>"`` (or
    ``"<step>:*"``): the crash-recovery tests kill a landing between two steps of the protocol."""
    spec = os.environ.get("RSTREAMS_SINK_FAULT")
    if spec and spec in (f"{step}:{batch_id}", f"{step}:*"):
        os._exit(70)


# -- small filesystem helpers --------------------------------------------------------------------
def write_atomic(path: str, data: bytes, *, exclusive: bool = False) -> bool:
    """Write ``data`` to ``path`` all at once: a temp file, fsync, then ``link`` (``exclusive``:
    False when ``path`` already exists) or ``rename`` (replacing). The temp file never stays."""
    d = os.path.dirname(path)
    tmp = os.path.join(d, f".{os.path.basename(path)}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if exclusive:
            try:
                os.link(tmp, path)  # atomic, and fails if another writer created it first
            except FileExistsError:
                return False
        else:
            os.replace(tmp, path)
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)


def remove_temp_files(directory: str, *, prefix: str = ".", older_than: float = 0.0) -> None:
    """Remove what :func:`write_atomic` (``.<name>.<id>.tmp``) or a log switch (``metadata-new-*``)
    left behind when its writer was killed. Call it where no live writer can be using them (under
    the lock that guards their writes), or with ``older_than`` seconds."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return
    now = time.time()
    for name in names:
        if not name.startswith(prefix) or (prefix == "." and not name.endswith(".tmp")):
            continue
        p = os.path.join(directory, name)
        try:
            if older_than and now - os.stat(p).st_mtime < older_than:
                continue
            if os.path.isdir(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.remove(p)
        except FileNotFoundError:
            pass


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _exchange(a: str, b: str) -> bool:
    """Swap two directories atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False if the system
    or filesystem cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), a)


def row_digest(row: Any) -> str:
    """A short digest of one input row, to check that a re-run's input is the one committed."""
    if hasattr(row, "asDict"):
        row = row.asDict()
    text = repr(sorted(row.items(), key=lambda kv: str(kv[0]))) if isinstance(row, dict) else repr(row)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _holder() -> dict[str, Any]:
    return {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _describe_holder(text: str) -> str:
    try:
        h = json.loads(text)
        extra = " (recovering it after its writer died)" if h.get("recovery") else ""
        return f"pid {h.get('pid')} on {h.get('host')} since {h.get('since')}{extra}"
    except (ValueError, AttributeError):
        return "an unknown process"


class _FileLock:
    """An exclusive ``flock`` on a file: the kernel releases it when the holder dies."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return True

    def write_holder(self, info: dict[str, Any]) -> None:
        assert self._fd is not None
        data = json.dumps(info).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def read_holder(self) -> str:
        try:
            with open(self.path) as f:
                return f.read()
        except OSError:
            return ""

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None


class PathLock:
    """The path-wide lock taken around each ``_spark_metadata`` append and the overwrite switch
    (milliseconds): appends of concurrent landings get distinct, consecutive log ids, and a
    compaction sees every entry before it."""

    def __init__(self, root: str) -> None:
        self._lock = _FileLock(os.path.join(root, CONTROL_DIR, "lock"))

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while not self._lock.try_acquire():
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"the path lock {self._lock.path} has been held for over {LOCK_WAIT_SECONDS:.0f} s by "
                    f"{_describe_holder(self._lock.read_holder())}"
                )
            time.sleep(0.01)
        try:
            self._lock.write_holder(_holder())
            yield
        finally:
            self._lock.release()


# -- Spark's file-sink log -------------------------------------------------------------------
def file_uri(path: str) -> str:
    return Path(os.path.abspath(path)).as_uri()


def sink_file_status(path: str) -> dict[str, Any]:
    """One line of Spark's file-sink log (``SinkFileStatus``) for a local file."""
    st = os.stat(path)
    return {
        "path": file_uri(path),
        "size": st.st_size,
        "isDir": False,
        "modificationTime": int(st.st_mtime * 1000),
        "blockReplication": 1,
        "blockSize": 32 * 1024 * 1024,
        "action": "add",
    }


def _derive_compact_interval(default: int, latest_compact: int) -> int:
    """Spark's ``CompactibleFileStreamLog.deriveCompactInterval``, for a log with one compaction."""
    n = latest_compact + 1
    if n <= default:
        return n
    if default < n // 2:
        for i in range(default, n // 2 + 1):
            if n % i == 0:
                return i
    return n


class SparkFileLog:
    """``<path>/_spark_metadata``: the log of Structured Streaming's file sink, written the way
    Spark writes it (version line ``v1``, one JSON ``SinkFileStatus`` per line, a ``.compact`` file
    every 10 batches holding everything before), so Spark's readers list exactly the files it
    names. Appends happen under the :class:`PathLock`."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.dir = os.path.join(root, METADATA_DIR)

    def exists(self) -> bool:
        return os.path.isdir(self.dir)

    def _ids(self) -> tuple[list[int], list[int]]:
        ids: list[int] = []
        compacts: list[int] = []
        for name in os.listdir(self.dir):
            base = name[: -len(".compact")] if name.endswith(".compact") else name
            if base.isdigit():
                ids.append(int(base))
                if name.endswith(".compact"):
                    compacts.append(int(base))
        return sorted(ids), sorted(compacts)

    def _interval(self, compacts: list[int]) -> int:
        if len(compacts) >= 2:
            return compacts[-1] - compacts[-2]
        if len(compacts) == 1:
            return _derive_compact_interval(DEFAULT_COMPACT_INTERVAL, compacts[0])
        return DEFAULT_COMPACT_INTERVAL

    def _file(self, batch: int, interval: int) -> str:
        suffix = ".compact" if (batch + 1) % interval == 0 else ""
        return os.path.join(self.dir, f"{batch}{suffix}")

    def _read(self, batch: int, interval: int) -> list[dict[str, Any]]:
        with open(self._file(batch, interval), encoding="utf-8") as f:
            lines = f.read().split("\n")
        if not lines or not lines[0].startswith("v"):
            raise ValueError(f"{self._file(batch, interval)}: not a Spark file-sink log file")
        return [json.loads(line) for line in lines[1:] if line.strip()]

    def all_files(self) -> list[dict[str, Any]]:
        """Every file the log makes visible (what Spark's readers list)."""
        if not self.exists():
            return []
        ids, compacts = self._ids()
        if not ids:
            return []
        interval = self._interval(compacts)
        latest = ids[-1]
        start = max(0, (latest + 1) // interval * interval - 1)
        out: list[dict[str, Any]] = []
        for b in range(start, latest + 1):
            out.extend(self._read(b, interval))
        return out

    def visible_uris(self) -> set[str]:
        return {str(f["path"]) for f in self.all_files()}

    def append(self, files: list[dict[str, Any]]) -> int:
        """Append one batch listing ``files`` (call under the path lock); returns its log id."""
        os.makedirs(self.dir, exist_ok=True)
        while True:
            ids, compacts = self._ids()
            interval = self._interval(compacts)
            batch = ids[-1] + 1 if ids else 0
            entries = files
            if (batch + 1) % interval == 0:  # a compaction: everything before it, then this batch
                entries = self.all_files() + files
            data = "v1" + "".join("\n" + json.dumps(e, separators=(",", ":")) for e in entries)
            if write_atomic(self._file(batch, interval), data.encode("utf-8"), exclusive=True):
                _fsync_dir(self.dir)
                return batch
            # another writer that does not take our path lock (a Spark file sink) took this id

    def create(self, files: list[dict[str, Any]]) -> None:
        """Start the log (under the path lock); its first batch lists ``files`` (data that was in
        the path before the first landing, which would otherwise vanish from readers)."""
        if self.exists():
            return
        tmp = os.path.join(self.root, CONTROL_DIR, f"metadata-new-{uuid.uuid4().hex[:8]}")
        os.makedirs(tmp)
        try:
            data = "v1" + "".join("\n" + json.dumps(e, separators=(",", ":")) for e in files)
            write_atomic(os.path.join(tmp, "0"), data.encode("utf-8"))
            try:
                os.rename(tmp, self.dir)  # atomic: readers list the directory until here
            except OSError as e:
                if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def finish_interrupted_switch(self) -> bool:
        """Under the path lock, with no log in place: a writer killed between the two renames of
        :meth:`replace_with`'s fallback (or before :meth:`create`'s rename) left the complete new
        log in ``_rstreams/metadata-new-*``; rename it into place (True). Without this the next
        start would list every file in the path anew: the overwritten ones back beside the new."""
        control = os.path.join(self.root, CONTROL_DIR)
        try:
            names = os.listdir(control)
        except FileNotFoundError:
            return False
        ready = [
            n for n in names
            if n.startswith("metadata-new-") and not n.endswith("-old") and os.path.isfile(os.path.join(control, n, "0"))
        ]  # fmt: skip
        if len(ready) != 1:
            return False
        os.rename(os.path.join(control, ready[0]), self.dir)
        _fsync_dir(self.root)
        return True

    def replace_with(self, files: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Overwrite (under the path lock): a new log listing only ``files`` takes the old one's
        place in one atomic exchange (where the system has one; else two renames, during which
        readers list the directory). Returns the files the old log listed."""
        old = self.all_files()
        tmp = os.path.join(self.root, CONTROL_DIR, f"metadata-new-{uuid.uuid4().hex[:8]}")
        os.makedirs(tmp)
        data = "v1" + "".join("\n" + json.dumps(e, separators=(",", ":")) for e in files)
        write_atomic(os.path.join(tmp, "0"), data.encode("utf-8"))
        if not self.exists():
            os.rename(tmp, self.dir)
            return old
        if not _exchange(tmp, self.dir):
            aside = tmp + "-old"
            os.rename(self.dir, aside)
            os.rename(tmp, self.dir)
            tmp = aside
        shutil.rmtree(tmp, ignore_errors=True)  # the old log, now at tmp
        return old


# -- one landing -----------------------------------------------------------------------------
def _safe(name: str) -> str:
    """The landing's directory name: ``name`` itself when it is a plain file name, else its safe
    characters plus a digest of the whole name, so two names never share one directory (``"a/b"``
    and ``"a_b"`` sharing one made the second a re-run of the first: "already complete", nothing
    landed). Idempotent: a returned name maps to itself."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    if safe == name and name not in (".", ".."):
        return name
    return f"{safe}-{hashlib.blake2b(name.encode('utf-8', 'surrogatepass'), digest_size=4).hexdigest()}"


class Landing:
    """One named landing's control directory: lease, commit log, staging, completion marker."""

    def __init__(self, root: str, name: str) -> None:
        self.root = root
        self.name = name
        self.dir = os.path.join(root, CONTROL_DIR, "landings", _safe(name))
        self.commits = os.path.join(self.dir, "commits")
        self.staging_root = os.path.join(self.dir, "staging")
        self._lease = _FileLock(os.path.join(self.dir, "lease"))
        self.token = ""
        self.mode = "append"

    # lease ------------------------------------------------------------------------------------
    def acquire(self, mode: str, *, recovery: bool = False) -> bool:
        """Take the lease (False if another live writer holds it and ``recovery``). A writer
        waits a little for a holder that only recovers the landing; otherwise another holder is a
        :class:`LandingInUseError`."""
        os.makedirs(self.commits, exist_ok=True)
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while not self._lease.try_acquire():
            if recovery:
                return False
            text = self._lease.read_holder()
            if '"recovery": true' in text and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            raise LandingInUseError(self.name, _describe_holder(text), self.committed_rows())
        info = _holder()
        if recovery:
            info["recovery"] = True
        self._lease.write_holder(info)
        meta = os.path.join(self.dir, "landing.json")
        try:
            with open(meta, encoding="utf-8") as f:
                stored = json.load(f)
            self.token, self.mode = str(stored["token"]), str(stored.get("mode", "append"))
        except FileNotFoundError:
            if recovery:
                self.token, self.mode = "", "append"
            else:
                self.token, self.mode = uuid.uuid4().hex[:12], mode
                write_atomic(meta, json.dumps({"name": self.name, "token": self.token, "mode": mode, **_holder()}).encode())
        return True

    def release(self) -> None:
        self._lease.release()

    @property
    def held(self) -> bool:
        return self._lease.held

    # commit log -------------------------------------------------------------------------------
    def entries(self) -> list[dict[str, Any]]:
        out = []
        try:
            names = sorted(os.listdir(self.commits))
        except FileNotFoundError:
            return []
        for name in names:
            if name.endswith(".json") and not name.startswith("."):
                with open(os.path.join(self.commits, name), encoding="utf-8") as f:
                    out.append(json.load(f))
        return out

    def committed_rows(self) -> int:
        return max((int(e["end_row"]) for e in self.entries()), default=0)

    def commit(self, entry: dict[str, Any]) -> None:
        name = os.path.join(self.commits, f"{int(entry['batch_id']):08d}.json")
        data = json.dumps(entry).encode("utf-8")
        if not write_atomic(name, data, exclusive=True):
            with open(name, encoding="utf-8") as f:
                if json.load(f) != entry:
                    raise RuntimeError(f"{name} already holds another commit (two writers of one landing?)")
        _fsync_dir(self.commits)

    def completion(self) -> dict[str, Any] | None:
        try:
            with open(os.path.join(self.dir, "_COMPLETE"), encoding="utf-8") as f:
                data = json.load(f)
            return data if isinstance(data, dict) else {}
        except FileNotFoundError:
            return None
        except ValueError:
            return {}

    def mark_complete(self, rows: int) -> None:
        write_atomic(os.path.join(self.dir, "_COMPLETE"), json.dumps({"rows": rows, **_holder()}).encode())

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    # staging and publishing ----------------------------------------------------------------------
    def staging(self, batch_id: int) -> str:
        return os.path.join(self.staging_root, f"batch-{batch_id:08d}")

    def has_staged(self) -> bool:
        try:
            return bool(os.listdir(self.staging_root))
        except FileNotFoundError:
            return False

    def publish(self, entry: dict[str, Any], log: SparkFileLog, lock: PathLock, visible: set[str] | None = None) -> None:
        """Steps 3-5 for a committed batch, each idempotent (a roll-forward repeats them).
        ``visible``: the URIs the log lists already (read from the log when None)."""
        batch_id = int(entry["batch_id"])
        staging = self.staging(batch_id)
        finals = []
        for name in entry.get("files", []):
            src = os.path.join(staging, name)
            dst = os.path.join(self.root, name)
            if os.path.exists(src):
                os.replace(src, dst)
            finals.append(dst)
        fault_point("publish", batch_id)
        with lock.held():
            listed = visible if visible is not None else log.visible_uris()
            missing = [p for p in finals if file_uri(p) not in listed and os.path.exists(p)]
            if entry.get("overwrite"):
                # (a batch whose files a later overwrite removed has none missing: nothing to do)
                if missing:
                    current = log.all_files()
                    count, head = entry.get("replaces") or [len(current), None]
                    if count == 0 and head is None:
                        later: list[dict[str, Any]] | None = current  # all published after the commit
                    elif count <= len(current) and current[count - 1]["path"] == head:
                        later = current[count:]
                    else:
                        later = None  # another overwrite replaced the log since: never drop its rows
                    if later is None:
                        log.append([sink_file_status(p) for p in missing])
                    else:
                        new = [sink_file_status(p) for p in missing] + later
                        old = log.replace_with(new)
                        remove_listed_files(old, keep={str(f["path"]) for f in new})
            elif missing:
                log.append([sink_file_status(p) for p in missing])
            if visible is not None:
                visible.update(file_uri(p) for p in finals)
        fault_point("metadata", batch_id)
        shutil.rmtree(staging, ignore_errors=True)

    def roll(self, log: SparkFileLog, lock: PathLock) -> list[dict[str, Any]]:
        """Finish what a dead writer left: publish committed batches, delete uncommitted staging.
        Returns the commit entries."""
        entries = self.entries()
        if self.has_staged():
            visible = log.visible_uris()
            committed = {int(e["batch_id"]) for e in entries}
            for e in entries:
                if os.path.isdir(self.staging(int(e["batch_id"]))):
                    self.publish(e, log, lock, visible)
            for name in os.listdir(self.staging_root):
                m = re.fullmatch(r"batch-(\d+)", name)
                if m is None or int(m.group(1)) not in committed:
                    shutil.rmtree(os.path.join(self.staging_root, name), ignore_errors=True)
        return entries


def remove_listed_files(files: list[dict[str, Any]], keep: set[str]) -> None:
    """Delete the data files of log entries an overwrite replaced (those not in ``keep``)."""
    for f in files:
        if f["path"] not in keep:
            with contextlib.suppress(OSError):
                os.remove(_uri_path(str(f["path"])))


def _uri_path(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(uri).path)


def landings(root: str) -> list[str]:
    d = os.path.join(root, CONTROL_DIR, "landings")
    try:
        return sorted(os.listdir(d))
    except FileNotFoundError:
        return []


def recover_dead_landings(root: str, own: str, log: SparkFileLog, lock: PathLock) -> None:
    """Roll forward the committed batches of landings whose writer died (their lease is free), so
    no committed row stays invisible because its writer never came back."""
    for safe_name in landings(root):
        if safe_name == _safe(own):
            continue
        other = Landing(root, safe_name)
        if not other.has_staged():
            continue
        if not other.acquire("append", recovery=True):
            continue  # alive: it finishes its own batches
        try:
            other.roll(log, lock)
        finally:
            other.release()
