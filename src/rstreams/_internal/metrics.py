"""Metrics of named stages (``Flowable.name(...)`` / ``tag(k, v)``): counters and gauges, pulled.

Each subscription of a named stage has its own :class:`Meter` whose counters are plain ints with a
single writer each, so counting costs no lock per element and is exact without the GIL too:
``emitted``/``completed``/``failed`` are written only by the upstream's serial signals (rule 1.3),
``requested``/``cancelled`` only by the downstream's serial calls (rule 2.7). A reader (a snapshot,
a scrape) sees each counter's latest or a slightly older value, never a torn one.

A :class:`StageMetrics` gathers the meters of one (name, tags) pair: live ones in a set, ended ones
folded into totals (under its lock, once per subscription). The registry holds the stages; it is
pull-based (``snapshot()``), so an exporter reads it when it is scraped. ``set_registry`` swaps the
registry (for tests, or one that exports somewhere else); any object with ``stage(name, tags)``
returning a :class:`StageMetrics` will do.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .requests import MAX_DEMAND, add_cap

__all__ = [
    "Meter",
    "MetricsRegistry",
    "Registry",
    "StageMetrics",
    "StageSnapshot",
    "get_registry",
    "set_registry",
]

Tags = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class StageSnapshot:
    """The counters and gauges of one named stage at one moment.

    Counters (since the stage was created): ``subscribed``, ``requested`` (capped at 2**63-1),
    ``emitted``, ``completed``, ``failed``, ``cancelled``. Gauges (live subscriptions now):
    ``active``, ``outstanding_demand`` (requested and not yet emitted; 2**63-1 = unbounded) and
    ``queued`` (elements waiting in the stage just above, where it has a queue).

    Example::

        ts = Flowable.range(0, 10).name("nums").test(3)     # 3 requested, the subscription live
        snap = metrics.get_registry().snapshot()["nums"]
        snap.emitted, snap.active, snap.outstanding_demand  # (3, 1, 0)
    """

    name: str
    tags: Mapping[str, str]
    subscribed: int
    requested: int
    emitted: int
    completed: int
    failed: int
    cancelled: int
    active: int
    outstanding_demand: int
    queued: int


class Meter:
    """The counters of one subscription of a named stage (see the module docstring for who writes what).

    Example::

        ts = Flowable.range(0, 10).name("nums").test(3)
        meter = metrics.get_registry().stage("nums", ()).live()[0]
        meter.requested, meter.emitted, meter.outstanding   # (3, 3, 0)
    """

    __slots__ = ("requested", "emitted", "completed", "failed", "cancelled", "queued", "thread", "__weakref__")

    def __init__(self) -> None:
        self.requested = 0
        self.emitted = 0
        self.completed = 0
        self.failed = 0
        self.cancelled = 0
        self.queued: Callable[[], int | None] | None = None  # the upstream's queue length, if it has one
        self.thread = ""  # the thread of the latest upstream signal

    @property
    def outstanding(self) -> int:
        if self.requested >= MAX_DEMAND:
            return MAX_DEMAND
        return max(0, self.requested - self.emitted)


class StageMetrics:
    """All subscriptions of one named stage.

    Example::

        Flowable.range(0, 5).name("nums").tag("env", "dev").blocking_subscribe()
        stage = metrics.get_registry().stage("nums", (("env", "dev"),))
        stage.snapshot().emitted, len(stage.live())         # (5, 0): one ended subscription
    """

    def __init__(self, name: str, tags: Tags) -> None:
        self.name = name
        self.tags = tags
        # race: a subscription starting or ending (set/totals) vs a snapshot reading them
        self._lock = threading.Lock()
        self._live: set[Meter] = set()
        self._subscribed = 0
        self._totals = [0, 0, 0, 0, 0]  # requested, emitted, completed, failed, cancelled of ended meters

    def start(self) -> Meter:
        meter = Meter()
        with self._lock:
            self._subscribed += 1
            self._live.add(meter)
        return meter

    def end(self, meter: Meter) -> None:
        """Fold an ended subscription's counts into the totals (once: a second call finds it gone)."""
        with self._lock:
            if meter not in self._live:
                return
            self._live.discard(meter)
            t = self._totals
            t[0] = add_cap(t[0], meter.requested)
            t[1] += meter.emitted
            t[2] += meter.completed
            t[3] += meter.failed
            t[4] += meter.cancelled

    def live(self) -> list[Meter]:
        with self._lock:
            return list(self._live)

    def snapshot(self) -> StageSnapshot:
        with self._lock:
            live = list(self._live)
            requested, emitted, completed, failed, cancelled = self._totals
            subscribed = self._subscribed
        outstanding = 0
        queued = 0
        for m in live:
            requested = add_cap(requested, m.requested)
            emitted += m.emitted
            completed += m.completed
            failed += m.failed
            cancelled += m.cancelled
            outstanding = add_cap(outstanding, m.outstanding)
            q = m.queued() if m.queued is not None else None
            queued += q or 0
        return StageSnapshot(
            self.name, dict(self.tags), subscribed, requested, emitted, completed, failed, cancelled,
            len(live), outstanding, queued,
        )  # fmt: skip


class MetricsRegistry(Protocol):
    """What a named stage needs from a registry: the StageMetrics of a (name, tags) pair.

    Example::

        class Mine:                                 # keeps its stages in a dict of its own
            def __init__(self): self.stages = {}
            def stage(self, name, tags):
                return self.stages.setdefault((name, tags), metrics.StageMetrics(name, tags))
        metrics.set_registry(Mine())
    """

    def stage(self, name: str, tags: Tags) -> StageMetrics: ...


class Registry:
    """The default registry: one StageMetrics per (name, tags), kept in memory, read by ``snapshot()``.

    Example::

        from rstreams import metrics
        Flowable.range(0, 10).name("numbers").blocking_subscribe(print)
        metrics.get_registry().snapshot()["numbers"].emitted   # 10
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()  # race: two stages with one new name created at once
        self._stages: dict[tuple[str, Tags], StageMetrics] = {}

    def stage(self, name: str, tags: Tags) -> StageMetrics:
        key = (name, tags)
        with self._lock:
            s = self._stages.get(key)
            if s is None:
                s = self._stages[key] = StageMetrics(name, tags)
            return s

    def stages(self) -> list[StageMetrics]:
        with self._lock:
            return list(self._stages.values())

    def snapshot(self) -> dict[str, StageSnapshot]:
        """Each stage's snapshot by name (a name used with several tag sets: ``name{k=v,...}``)."""
        out: dict[str, StageSnapshot] = {}
        for s in self.stages():
            key = s.name if not s.tags else s.name + "{" + ",".join(f"{k}={v}" for k, v in s.tags) + "}"
            out[key] = s.snapshot()
        return out

    def clear(self) -> None:
        with self._lock:
            self._stages.clear()


_lock = threading.Lock()
_registry: Any = Registry()


def get_registry() -> Any:
    """The registry named stages register with (the in-memory :class:`Registry` by default).

    Example::

        Flowable.range(0, 10).name("numbers").blocking_subscribe()
        metrics.get_registry().snapshot()["numbers"].emitted   # 10
    """
    return _registry


def set_registry(registry: MetricsRegistry | None) -> None:
    """Use ``registry`` for stages subscribed from now on; ``None``: a fresh in-memory Registry.

    Example::

        metrics.set_registry(None)                  # start from an empty in-memory Registry
        Flowable.just(1, 2).name("pair").blocking_subscribe()
        metrics.get_registry().snapshot()["pair"].emitted      # 2
    """
    global _registry
    if registry is not None and not callable(getattr(registry, "stage", None)):
        raise TypeError(f"set_registry(): expected an object with stage(name, tags), got {type(registry).__name__}")
    with _lock:
        _registry = Registry() if registry is None else registry
