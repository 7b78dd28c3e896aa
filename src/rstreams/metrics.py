"""Metrics of named stages (``Flowable.name(...)``, ``Flowable.tag(k, v)``), pulled from a registry.

Example::

    from rstreams import Flowable, metrics
    Flowable.range(0, 100).name("numbers").filter(lambda x: x % 2).blocking_subscribe(print)
    snap = metrics.get_registry().snapshot()["numbers"]
    snap.emitted, snap.completed, snap.outstanding_demand      # (100, 1, 0)

The registry is process-wide state: ``set_registry(None)`` starts a fresh in-memory one (tests);
``set_registry(obj)`` uses any object with ``stage(name, tags) -> StageMetrics`` (to keep stages
somewhere else). ``prometheus_collector()`` exposes the in-memory registry to ``prometheus_client``
when it is installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._internal.metrics import (
    Meter,
    MetricsRegistry,
    Registry,
    StageMetrics,
    StageSnapshot,
    get_registry,
    set_registry,
)

__all__ = [
    "Meter",
    "MetricsRegistry",
    "Registry",
    "StageMetrics",
    "StageSnapshot",
    "get_registry",
    "prometheus_collector",
    "set_registry",
]

_COUNTERS = ("subscribed", "requested", "emitted", "completed", "failed", "cancelled")
_GAUGES = ("active", "outstanding_demand", "queued")


def prometheus_collector(registry: Registry | None = None) -> Any:
    """A ``prometheus_client`` collector over ``registry`` (default: the current one), read at scrape.

    ``prometheus_client.REGISTRY.register(metrics.prometheus_collector())`` exposes
    ``rstreams_stage_<counter>_total{stage=..., <tags>}`` and ``rstreams_stage_<gauge>``.
    Raises ImportError when ``prometheus_client`` is not installed.

    Example::

        from prometheus_client import REGISTRY, generate_latest
        REGISTRY.register(metrics.prometheus_collector())
        Flowable.range(0, 10).name("numbers").blocking_subscribe()
        generate_latest()       # ... rstreams_stage_emitted_total{stage="numbers"} 10.0 ...
    """
    import importlib

    core: Any = importlib.import_module("prometheus_client.core")  # optional: not a dependency
    CounterMetricFamily, GaugeMetricFamily = core.CounterMetricFamily, core.GaugeMetricFamily

    class _Collector:
        def collect(self) -> Iterator[Any]:
            reg = registry if registry is not None else get_registry()
            stages: list[StageMetrics] = reg.stages()
            snaps = [s.snapshot() for s in stages]
            labels = sorted({"stage", *(k for s in snaps for k in s.tags)})
            for field in _COUNTERS + _GAUGES:
                family_type = CounterMetricFamily if field in _COUNTERS else GaugeMetricFamily
                fam = family_type(f"rstreams_stage_{field}", f"rstreams named stage: {field}", labels=labels)
                for s in snaps:
                    values = {"stage": s.name, **s.tags}
                    fam.add_metric([values.get(k, "") for k in labels], getattr(s, field))
                yield fam

    return _Collector()
