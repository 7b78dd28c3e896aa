"""The benchmark harness: a tiny registry, round-robin timing, n/a vs ERROR, tables, JSON, compare.

A benchmark module ``benchmarks/bench_<name>.py`` declares itself and its variants::

    B = benchmark("sync_chain", "Flowable map/filter/reduce vs builtins", n=1_000_000, quick_n=2_000)

    @B.variant("builtin sum(filter(map))", baseline=True)
    def _builtin(ctx: Context) -> int:
        return sum(filter(p, map(f, range(ctx.n))))

    @B.variant("Flowable fused", targets=[Target(">= 0.8x", min_ratio=0.8)])
    def _fused(ctx: Context) -> int: ...

Each variant returns its result, which the harness compares (outside the timing) with
``expect(n)`` of the variant or of its benchmark, so a fast wrong answer is an ERROR. The ratio column
of a variant is its throughput over that of the closest baseline declared before it (``ref``).

Timing: one warm-up run per variant, then ``repeats`` rounds; each round runs every variant once,
round-robin (starting one further along each round) so drift on a shared machine hits all variants
alike. The figures are the median wall time per variant, and spread = (max - min) / median.
``isolated`` variants (memory measurements) run each time in a fresh subprocess
(``python -m benchmarks --child BENCH VARIANT``) that also reports the growth of its peak RSS.

A variant that needs what does not exist yet (ImportError, NotImplementedError, AttributeError on a
missing public name of rstreams or of a module, or :class:`Unavailable`) is ``n/a (<reason>)``; any
other exception is ``ERROR (<reason>)`` and makes the run exit with status 1.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import faulthandler
import gc
import importlib
import json
import math
import os
import pkgutil
import platform
import re
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Benchmark",
    "Context",
    "Result",
    "Target",
    "Unavailable",
    "Variant",
    "WrongResult",
    "benchmark",
    "classify",
    "main",
    "median",
    "ratio",
    "spread",
]

OK = "ok"
NA = "n/a"
ERROR = "ERROR"

ROOT = Path(__file__).resolve().parent.parent
CHILD_MARK = "@@BENCH-RESULT "
SLOW_RUN_S = 6.0  # a warm-up run longer than this ...
TARGET_RUN_S = 2.0  # ... makes the timed runs use fewer items, about this long


class Unavailable(Exception):
    """Raised by a variant or a benchmark set-up: the thing it measures cannot run here (n/a)."""


class WrongResult(AssertionError):
    """A variant returned a result different from the expected one (always an ERROR)."""


# ----------------------------------------------------------------------------------------------------
# math (unit-tested in tests/meta/test_benchmarks.py)


def median(xs: Sequence[float]) -> float:
    """The median of a non-empty sequence (mean of the two middle values for an even length)."""
    if not xs:
        raise ValueError("median of an empty sequence")
    s = sorted(xs)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def spread(xs: Sequence[float]) -> float:
    """(max - min) / median: 0.0 for a single sample."""
    m = median(xs)
    return (max(xs) - min(xs)) / m if m > 0 else 0.0


def ratio(rate: float | None, ref_rate: float | None) -> float | None:
    """Throughput ratio ``rate / ref_rate`` (> 1 means faster than the reference); None if unknown."""
    if rate is None or ref_rate is None or ref_rate <= 0 or math.isinf(ref_rate):
        return None
    return rate / ref_rate


# ----------------------------------------------------------------------------------------------------
# n/a vs ERROR


def _short(exc: BaseException, limit: int = 90) -> str:
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    text = re.sub(r" \((?:/|[A-Za-z]:\\)[^)]*\)", "", " ".join(text.split()))  # drop file paths
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_missing_feature(exc: AttributeError) -> bool:
    """True when the AttributeError says a public name of rstreams (or of a module) does not exist yet.

    An AttributeError raised deep inside an existing operator (a bug) stays an ERROR.
    """
    name = getattr(exc, "name", None)
    if name is not None and str(name).startswith("_"):
        return False
    obj = getattr(exc, "obj", None)
    if obj is not None:
        if isinstance(obj, type(sys)):
            return True
        cls = obj if isinstance(obj, type) else type(obj)
        return cls.__module__.split(".")[0] == "rstreams"
    # Raised by a module-level __getattr__ (no .obj): trust it only when it names rstreams.
    return "rstreams" in str(exc) or "Flowable" in str(exc)


def classify(exc: BaseException) -> tuple[str, str]:
    """(status, reason): ``"n/a"`` for a missing library or feature, ``"ERROR"`` for anything else."""
    if isinstance(exc, Unavailable):
        return NA, str(exc) or "unavailable"
    if isinstance(exc, WrongResult):
        return ERROR, _short(exc)
    if isinstance(exc, (ImportError, NotImplementedError)):
        return NA, _short(exc)
    if isinstance(exc, AttributeError) and _is_missing_feature(exc):
        return NA, _short(exc)
    return ERROR, _short(exc)


# ----------------------------------------------------------------------------------------------------
# registry


@dataclass(frozen=True)
class Target:
    """A target printed next to the ratio and checked (informational only: it never fails the run).

    ``min_ratio``: throughput >= min_ratio x the reference (``against`` or the ratio column's ref).
    ``max_rss_mb``: peak RSS growth <= this many MB (isolated variants).
    ``max_rss_ratio``: peak RSS growth <= this fraction of the reference's growth.
    """

    text: str
    min_ratio: float | None = None
    against: str | None = None
    max_rss_mb: float | None = None
    max_rss_ratio: float | None = None
    #: this variant's ratio (to its own baseline) >= this fraction of ``against``'s ratio (to its
    #: baseline): flatness measured against what the baselines themselves lose (e.g. a dict's
    #: cache misses as the number of keys grows)
    min_ratio_of_ratio: float | None = None


@dataclass
class Context:
    """What a variant gets: its item count, the mode, the benchmark's set-up data and a time limit."""

    n: int
    quick: bool
    data: Any = None
    timeout: float = 120.0
    #: seconds of this run the variant itself measured as not part of the work (e.g. opening
    #: 100,000 groups before their steady state is timed); subtracted from the run's time
    excluded_s: float = 0.0


@dataclass
class Variant:
    name: str
    fn: Callable[[Context], Any]
    baseline: bool = False
    targets: tuple[Target, ...] = ()
    scale: float = 1.0
    isolated: bool = False
    expect: Callable[[Context], Any] | None = None
    ref: str | None = None

    def items(self, n: int) -> int:
        return max(1, int(n * self.scale))


@dataclass
class Benchmark:
    name: str
    title: str
    n: int
    quick_n: int
    order: int = 100
    setup: Callable[[int, bool], Any] | None = None
    teardown: Callable[[Any], None] | None = None
    expect: Callable[[Context], Any] | None = None
    in_quick: bool = True
    notes: str = ""
    child_warmup: int = 2_000
    scalable: bool = True
    timeout_s: float | None = None
    variants: list[Variant] = field(default_factory=list)

    def variant(
        self,
        name: str,
        *,
        baseline: bool = False,
        targets: Iterable[Target] = (),
        scale: float = 1.0,
        isolated: bool = False,
        expect: Callable[[Context], Any] | None = None,
    ) -> Callable[[Callable[[Context], Any]], Callable[[Context], Any]]:
        """Decorator registering ``fn(ctx) -> result`` as a variant of this benchmark."""

        def register(fn: Callable[[Context], Any]) -> Callable[[Context], Any]:
            if any(v.name == name for v in self.variants):
                raise ValueError(f"duplicate variant {name!r} in {self.name}")
            ref = None
            if not baseline:
                ref = next((v.name for v in reversed(self.variants) if v.baseline), None)
            self.variants.append(Variant(name, fn, baseline, tuple(targets), scale, isolated, expect, ref))
            return fn

        return register

    def header(self, quick: bool, n: int | None = None) -> str:
        n = n if n is not None else (self.quick_n if quick else self.n)
        return f"== {self.name}: {self.title} [N={n:,}]"


REGISTRY: dict[str, Benchmark] = {}


def benchmark(
    name: str,
    title: str,
    *,
    n: int,
    quick_n: int,
    order: int = 100,
    setup: Callable[[int, bool], Any] | None = None,
    teardown: Callable[[Any], None] | None = None,
    expect: Callable[[Context], Any] | None = None,
    in_quick: bool = True,
    notes: str = "",
    child_warmup: int = 2_000,
    scalable: bool = True,
    timeout_s: float | None = None,
) -> Benchmark:
    """Create and register a benchmark (one module may register several)."""
    if name in REGISTRY:
        raise ValueError(f"duplicate benchmark {name!r}")
    b = Benchmark(
        name,
        title,
        n,
        quick_n,
        order,
        setup,
        teardown,
        expect,
        in_quick,
        notes,
        child_warmup,
        scalable,
        timeout_s,
    )
    REGISTRY[name] = b
    return b


def load_all() -> list[Benchmark]:
    """Import every ``benchmarks/bench_*.py`` and return the benchmarks in suite order."""
    pkg = importlib.import_module("benchmarks")
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("bench_"):
            importlib.import_module(f"benchmarks.{info.name}")
    return sorted(REGISTRY.values(), key=lambda b: (b.order, b.name))


# ----------------------------------------------------------------------------------------------------
# results


@dataclass
class Result:
    variant: str
    items: int
    baseline: bool = False
    ref: str | None = None
    status: str = OK
    reason: str = ""
    times: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    ratio: float | None = None
    note: str = ""
    target_notes: list[str] = field(default_factory=list)
    targets_met: list[bool | None] = field(default_factory=list)

    @property
    def median_s(self) -> float | None:
        return median(self.times) if self.status == OK and self.times else None

    @property
    def items_per_s(self) -> float | None:
        m = self.median_s
        return self.items / m if m else None

    @property
    def spread(self) -> float | None:
        return spread(self.times) if self.status == OK and self.times else None

    @property
    def rss_growth_mb(self) -> float | None:
        return median(self.rss_mb) if self.status == OK and self.rss_mb else None

    def fail(self, exc: BaseException) -> None:
        self.status, self.reason = classify(exc)

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "status": self.status,
            "reason": self.reason,
            "note": self.note,
            "baseline": self.baseline,
            "ref": self.ref,
            "items": self.items,
            "times_s": self.times,
            "median_s": self.median_s,
            "min_s": min(self.times) if self.status == OK and self.times else None,
            "items_per_s": self.items_per_s,
            "ratio": self.ratio,
            "spread": self.spread,
            "rss_growth_mb": self.rss_growth_mb,
            "targets": [
                {"text": t, "met": m} for t, m in zip(self.target_notes, self.targets_met, strict=True)
            ],
        }


def evaluate(variants: Sequence[Variant], results: dict[str, Result]) -> None:
    """Fill each result's ratio (to its ref) and target verdicts (None = cannot tell)."""
    for v in variants:
        r = results[v.name]
        r.ratio = 1.0 if v.baseline and r.status == OK else None
        if v.ref is not None and v.ref in results:
            r.ratio = ratio(r.items_per_s, results[v.ref].items_per_s)
    for v in variants:
        r = results[v.name]
        r.target_notes, r.targets_met = [], []
        for t in v.targets:
            ref = results.get(t.against or v.ref or "")
            met: bool | None = None
            if r.status == OK:
                checks: list[bool | None] = []
                if t.min_ratio is not None:
                    q = ratio(r.items_per_s, ref.items_per_s if ref else None)
                    checks.append(None if q is None else q >= t.min_ratio)
                if t.min_ratio_of_ratio is not None:
                    other = ref.ratio if ref else None
                    checks.append(
                        None if other is None or r.ratio is None else r.ratio >= t.min_ratio_of_ratio * other
                    )
                if t.max_rss_mb is not None:
                    g = r.rss_growth_mb
                    checks.append(None if g is None else g <= t.max_rss_mb)
                if t.max_rss_ratio is not None:
                    g, rg = r.rss_growth_mb, ref.rss_growth_mb if ref else None
                    checks.append(None if g is None or not rg else g <= t.max_rss_ratio * rg)
                met = None if None in checks or not checks else all(checks)
            r.target_notes.append(t.text)
            r.targets_met.append(met)


# ----------------------------------------------------------------------------------------------------
# measuring


class _Watchdog:
    """Last resort against a hung variant: dump all stacks and exit(3) after the deadline."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._deadline: float | None = None
        self._label = ""
        t = threading.Thread(target=self._run, name="bench-watchdog", daemon=True)
        t.start()

    def arm(self, label: str, seconds: float) -> None:
        with self._cond:
            self._label, self._deadline = label, time.monotonic() + seconds
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._deadline = None
            self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while True:
                if self._deadline is None:
                    self._cond.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                print(f"\nERROR (hung: {self._label} did not finish in time)", flush=True)
                faulthandler.dump_traceback(all_threads=True)
                sys.stdout.flush()
                os._exit(3)


_WATCHDOG: _Watchdog | None = None


def _watchdog() -> _Watchdog:
    global _WATCHDOG
    if _WATCHDOG is None:
        _WATCHDOG = _Watchdog()
    return _WATCHDOG


_EXPECTED: dict[tuple[int, int, int], Any] = {}


def _check(v: Variant, b: Benchmark, ctx: Context, got: Any) -> None:
    expect = v.expect or b.expect
    if expect is None:
        return
    k = (id(expect), ctx.n, id(ctx.data))
    if k not in _EXPECTED:
        _EXPECTED[k] = expect(ctx)
    want = _EXPECTED[k]
    if got != want:
        g, w = repr(got), repr(want)
        raise WrongResult(f"got {g[:40]}, expected {w[:40]}")


def _read_status_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _rss_start_kb() -> int:
    """Current RSS, and reset the peak (VmHWM) to it where Linux allows (clear_refs 5)."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    rss = _read_status_kb("VmRSS")
    if rss is None:
        import resource

        rss = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return rss


def _rss_peak_kb() -> int:
    hwm = _read_status_kb("VmHWM")
    if hwm is None:
        import resource

        hwm = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return hwm


def _run_in_process(b: Benchmark, v: Variant, ctx: Context) -> tuple[float, float | None]:
    gc.collect()
    wd = _watchdog()
    wd.arm(f"{b.name} / {v.name}", ctx.timeout * 2 + 30)
    try:
        ctx.excluded_s = 0.0
        t0 = time.perf_counter()
        got = v.fn(ctx)
        dt = time.perf_counter() - t0 - ctx.excluded_s
    finally:
        wd.disarm()
    _check(v, b, ctx, got)
    return dt, None


def _run_isolated(b: Benchmark, v: Variant, ctx: Context) -> tuple[float, float | None]:
    cmd = [sys.executable, "-m", "benchmarks", "--child", b.name, v.name, "--n", str(ctx.n)]
    if ctx.quick:
        cmd.append("--quick")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    try:
        proc = subprocess.run(
            cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=ctx.timeout * 2 + 30
        )
    except subprocess.TimeoutExpired as exc:
        raise TimeoutError(f"child process did not finish in {exc.timeout:.0f} s") from None
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith(CHILD_MARK)), None)
    if line is None:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"child exited {proc.returncode}: {tail}")
    out = json.loads(line[len(CHILD_MARK) :])
    if out["status"] == NA:
        raise Unavailable(out["reason"])
    if out["status"] != OK:
        raise RuntimeError(out["reason"])
    return float(out["time_s"]), float(out["rss_growth_mb"])


def child_main(bench: str, variant: str, n: int, quick: bool) -> int:
    """Run one variant once in this (fresh) process; print one JSON line with time and RSS growth."""
    out: dict[str, Any] = {"status": OK, "reason": ""}
    try:
        benches = {b.name: b for b in load_all()}
        b = benches[bench]
        v = next(x for x in b.variants if x.name == variant)
        data = b.setup(n, quick) if b.setup else None
        ctx = Context(n=n, quick=quick, data=data, timeout=_timeout(b, quick))
        if b.child_warmup:
            # imports, scheduler threads and other one-time costs are not growth of the stream
            v.fn(Context(n=min(n, b.child_warmup), quick=quick, data=data, timeout=ctx.timeout))
        start = _rss_start_kb()
        ctx.excluded_s = 0.0
        t0 = time.perf_counter()
        got = v.fn(ctx)
        dt = time.perf_counter() - t0 - ctx.excluded_s
        peak = _rss_peak_kb()
        _check(v, b, ctx, got)
        out.update(time_s=dt, rss_growth_mb=max(0, peak - start) / 1024.0)
        if b.teardown is not None and data is not None:
            b.teardown(data)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        out["status"], out["reason"] = classify(exc)
        if out["status"] == ERROR:
            traceback.print_exc()
    print(CHILD_MARK + json.dumps(out), flush=True)
    return 0


def _timeout(b: Benchmark, quick: bool) -> float:
    if b.timeout_s is not None:
        return b.timeout_s
    return 30.0 if quick else 120.0


def run_benchmark(
    b: Benchmark,
    *,
    quick: bool,
    repeats: int,
    warmup: bool,
    echo: Callable[[str], None] = print,
    n: int | None = None,
) -> dict[str, Result]:
    """Measure every variant of ``b`` (``n`` overrides the benchmark's N); see the module docstring."""
    n = n if n is not None else (b.quick_n if quick else b.n)
    _EXPECTED.clear()
    results = {v.name: Result(v.name, v.items(n), v.baseline, v.ref) for v in b.variants}
    data: Any = None
    try:
        data = b.setup(n, quick) if b.setup else None
    except Exception as exc:
        for r in results.values():
            r.fail(exc)
        if classify(exc)[0] == ERROR:
            echo(f"   set-up of {b.name}: ERROR\n" + "".join(traceback.format_exception(exc)).rstrip())
        evaluate(b.variants, results)
        return results
    try:
        ctxs = {
            v.name: Context(n=v.items(n), quick=quick, data=data, timeout=_timeout(b, quick))
            for v in b.variants
        }
        active = list(b.variants)

        def once(v: Variant, keep: bool) -> None:
            r = results[v.name]
            try:
                runner = _run_isolated if v.isolated else _run_in_process
                dt, rss = runner(b, v, ctxs[v.name])
            except Exception as exc:
                r.fail(exc)
                if r.status == ERROR:
                    echo(f"   {v.name}: ERROR\n" + "".join(traceback.format_exception(exc)).rstrip())
                active.remove(v)
                return
            if keep:
                r.times.append(dt)
                if rss is not None:
                    r.rss_mb.append(rss)
            elif dt > SLOW_RUN_S and b.scalable and not v.isolated:
                # A variant far slower than planned (e.g. a missing fast path) would stretch the suite:
                # time it on fewer items, about TARGET_RUN_S per run; items/s stays comparable.
                items = max(1, int(ctxs[v.name].n * TARGET_RUN_S / dt))
                ctxs[v.name] = Context(n=items, quick=quick, data=data, timeout=_timeout(b, quick))
                r.items = items
                r.note = f"slow: timed on {items:,} items"

        if warmup:
            # isolated variants start a fresh process every run (which warms itself up): no use here
            for v in [x for x in active if not x.isolated]:
                once(v, keep=False)
        for i in range(repeats):
            order = active[i % len(active) :] + active[: i % len(active)] if active else []
            for v in order:
                if v in active:
                    once(v, keep=True)
    finally:
        if b.teardown is not None and data is not None:
            b.teardown(data)
    evaluate(b.variants, results)
    return results


# ----------------------------------------------------------------------------------------------------
# output


def _fmt_rate(x: float | None) -> str:
    if x is None:
        return "-"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}/s"
    return f"{x:.3g} /s"


def _fmt_target(r: Result) -> str:
    parts = []
    for text, met in zip(r.target_notes, r.targets_met, strict=True):
        mark = {True: "ok", False: "MISSED", None: "?"}[met]
        parts.append(f"{text} [{mark}]" if r.status == OK else text)
    return "; ".join(parts) or "-"


def format_table(b: Benchmark, results: dict[str, Result]) -> str:
    """One row per variant: variant | items/s | ratio | target | spread [| peak RSS] | note.

    A variant that did not run shows its status in the items/s column and ``n/a (<reason>)`` or
    ``ERROR (<reason>)`` as its note (last, so long reasons do not break the alignment).
    """
    show_rss = any(r.rss_mb for r in results.values())
    head = ["variant", "items/s", "ratio", "target", "spread"] + (["peak RSS"] if show_rss else [])
    head.append("note")
    rows: list[list[str]] = []
    for v in b.variants:
        r = results[v.name]
        name = v.name + (" [baseline]" if v.baseline else "")
        if r.status != OK:
            rows.append(
                [name, r.status, "-", _fmt_target(r), "-"]
                + (["-"] if show_rss else [])
                + [f"{r.status} ({r.reason})"]
            )
            continue
        q = "-" if r.ratio is None else f"{r.ratio:.2f}x"
        sp = "-" if r.spread is None or len(r.times) < 2 else f"{r.spread * 100:.0f}%"
        row = [name, _fmt_rate(r.items_per_s), q, _fmt_target(r), sp]
        if show_rss:
            g = r.rss_growth_mb
            row.append("-" if g is None else f"+{g:.1f} MB")
        row.append(r.note)
        rows.append(row)
    widths = [max(len(x[i]) for x in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip()]
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def machine() -> dict[str, Any]:
    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
    }


def to_json(
    runs: Sequence[tuple[Benchmark, dict[str, Result] | None]],
    *,
    quick: bool,
    repeats: int,
    n_override: int | None = None,
) -> dict[str, Any]:
    return {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "git_commit": _git_commit(),
        "quick": quick,
        "repeats": repeats,
        "benchmarks": [
            {
                "name": b.name,
                "title": b.title,
                "n": n_override or (b.quick_n if quick else b.n),
                "skipped": res is None,
                "results": [res[v.name].to_json() for v in b.variants] if res else [],
            }
            for b, res in runs
        ],
    }


def format_compare(old: dict[str, Any], new: dict[str, Any]) -> str:
    """Per variant: old items/s, new items/s and the change, for variants present in both files."""

    def index(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
        return {(b["name"], r["variant"]): r for b in doc["benchmarks"] for r in b["results"]}

    o, n = index(old), index(new)
    lines = [
        f"== compare: {old.get('date', '?')} ({(old.get('git_commit') or '?')[:10]}) -> "
        f"{new.get('date', '?')} ({(new.get('git_commit') or '?')[:10]})"
    ]
    head = ["benchmark / variant", "old items/s", "new items/s", "change", "old ratio", "new ratio"]
    rows: list[list[str]] = []
    for key, nr in n.items():
        orr = o.get(key)
        if orr is None:
            continue
        orate, nrate = orr.get("items_per_s"), nr.get("items_per_s")
        ch = ratio(nrate, orate)
        change = "-" if ch is None else f"{(ch - 1) * 100:+.1f}%"
        ostat = _fmt_rate(orate) if orr["status"] == OK else orr["status"]
        nstat = _fmt_rate(nrate) if nr["status"] == OK else nr["status"]

        def fq(x: float | None) -> str:
            return "-" if x is None else f"{x:.2f}x"

        rows.append([f"{key[0]} / {key[1]}", ostat, nstat, change, fq(orr.get("ratio")), fq(nr.get("ratio"))])
    if not rows:
        return lines[0] + "\n(no variant in common)"
    widths = [max(len(x[i]) for x in [head, *rows]) for i in range(len(head))]
    lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip())
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------
# command line


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description="rstreams benchmark suite")
    p.add_argument("--quick", action="store_true", help="smoke mode: tiny N, 1 repeat, no warm-up")
    p.add_argument("--only", metavar="REGEX", help="run the benchmarks whose name matches REGEX")
    p.add_argument("--json", metavar="OUT", help="write all results to OUT")
    p.add_argument("--compare", metavar="OLD", help="print the change against an earlier --json file")
    p.add_argument("--to", metavar="NEW", help="with --compare: compare two files, run nothing")
    p.add_argument("--repeats", type=int, default=None, help="timed repeats (default 5, quick 1)")
    p.add_argument("--list", action="store_true", help="list benchmarks and variants")
    p.add_argument("--child", nargs=2, metavar=("BENCH", "VARIANT"), help=argparse.SUPPRESS)
    p.add_argument("--n", type=int, help="override N of the selected benchmarks (exploration only)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.child:
        return child_main(args.child[0], args.child[1], int(args.n), args.quick)
    if args.compare and args.to:
        old = json.loads(Path(args.compare).read_text())
        print(format_compare(old, json.loads(Path(args.to).read_text())))
        return 0
    benches = load_all()
    if args.list:
        for b in benches:
            print(b.header(args.quick))
            for v in b.variants:
                print(f"   {v.name}" + (" [baseline]" if v.baseline else ""))
        return 0
    quick: bool = args.quick
    repeats = args.repeats if args.repeats is not None else (1 if quick else 5)
    if repeats < 1:
        raise SystemExit("--repeats must be >= 1")
    pattern = re.compile(args.only) if args.only else None
    m = machine()
    print(
        f"rstreams benchmarks: {'quick (smoke, figures meaningless)' if quick else 'full'}, "
        f"{repeats} repeat(s){'' if quick else ' after 1 warm-up'}, median; "
        f"{m['cpu_count']} cores, CPython {m['python']}, {m['platform']}",
        flush=True,
    )
    runs: list[tuple[Benchmark, dict[str, Result] | None]] = []
    failed = False
    for b in benches:
        if pattern is not None and not pattern.search(b.name):
            continue
        print("\n" + b.header(quick, args.n), flush=True)
        if quick and not b.in_quick and pattern is None:
            print(f"skipped in --quick (run it with --only {b.name})", flush=True)
            runs.append((b, None))
            continue
        t0 = time.perf_counter()
        res = run_benchmark(b, quick=quick, repeats=repeats, warmup=not quick, n=args.n)
        print(format_table(b, res))
        print(f"({time.perf_counter() - t0:.1f} s)", flush=True)
        runs.append((b, res))
        failed |= any(r.status == ERROR for r in res.values())
    doc = to_json(runs, quick=quick, repeats=repeats, n_override=args.n)
    if args.json:
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
        print(f"\nwrote {args.json}")
    if args.compare:
        print("\n" + format_compare(json.loads(Path(args.compare).read_text()), doc))
    if failed:
        print("\nsome variants ended in ERROR (see above)", flush=True)
    return 1 if failed else 0
