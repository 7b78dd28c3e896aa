"""Shared fixtures for the whole suite."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

sys.path.insert(0, os.path.dirname(__file__))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move what collection built (every test module, item and parameter: hundreds of thousands of
    objects) out of the collector's reach. Each ``gc.collect()`` of a rule 3.13 check (the TCK's, and the
    tests' own) then walks only what the tests allocate: ~0.05 s instead of ~0.4 s, hundreds of times per
    run. What the tests create is collected as before; only collection-time objects, alive until the end
    of the run anyway, are no longer traversed."""
    import gc

    gc.collect()
    gc.freeze()


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run order for a few workers on few cores (``make test`` is ``-n 2`` on 2 cores): the Spark
    tests (CPU-bound: a JVM in each worker, some start their own) are spread evenly among the
    kit's tests (tests/tck, tests/tck_self: mostly waiting out their no-signal timeouts), and that
    mix runs first, so a worker waiting on the kit leaves the CPU to the other's Spark; the short
    CPU-bound tests come last and end the run together on every worker (measured on 2 cores:
    the kit's waits at the end of the run had left a core idle for about a minute). Within each
    group the collection order is kept (a module's tests run in their written order); the order
    is the same in every worker, as xdist requires."""
    root = os.path.dirname(__file__)
    kit = (os.path.join(root, "tck") + os.sep, os.path.join(root, "tck_self") + os.sep)
    spark: list[pytest.Item] = []
    waits: list[pytest.Item] = []
    rest: list[pytest.Item] = []
    for item in items:
        if item.get_closest_marker("spark") is not None:
            spark.append(item)
        elif str(item.path).startswith(kit):
            waits.append(item)
        else:
            rest.append(item)
    if not spark or not waits:
        return
    mixed: list[pytest.Item] = []
    step = len(waits) / len(spark)
    for k, item in enumerate(spark):
        mixed.append(item)
        mixed.extend(waits[round(k * step):round((k + 1) * step)])
    items[:] = mixed + rest


@pytest.fixture
def undeliverable() -> Iterator[list[BaseException]]:
    """Collect the errors sent to the undeliverable-error hook during the test."""
    from rstreams import plugins

    with plugins.collect_errors() as errors:
        yield errors
