"""Every public Flowable source and operator has a TCK line (tests/tck/library_publishers.py),
or a stated reason why no exact-count Publisher can be made from it; every processor has a TCK class."""

from __future__ import annotations

import inspect
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tck"))

from library_publishers import CONSUMERS as TOPIC_CONSUMERS  # noqa: E402
from library_publishers import ENTRIES, NOT_VERIFIABLE  # noqa: E402

from rstreams import Flowable  # noqa: E402

# Methods that consume a Flowable (they are not Publisher factories).
CONSUMERS = {
    "subscribe", "test", "pipe", "to", "blocking_iterable", "blocking_first", "blocking_last",
    "blocking_subscribe", "blocking_single", "blocking_for_each", "to_future", "to_async_iterator",
    "send", "throw", "close",  # the coroutine protocol (asyncio.create_task(flowable) drives it)
} | TOPIC_CONSUMERS


def _public_factories() -> set[str]:
    names = set()
    for name, member in inspect.getmembers(Flowable):
        if name.startswith("_") or name in CONSUMERS:
            continue
        if callable(member):
            names.add(name)
    return names


def test_every_public_publisher_factory_has_a_tck_line() -> None:
    missing = sorted(n for n in _public_factories() if n not in ENTRIES and n not in NOT_VERIFIABLE)
    assert not missing, f"public Flowable factories without a TCK line in tests/tck/library_publishers.py: {missing}"


def test_tck_table_names_real_methods() -> None:
    public = _public_factories()
    stale = sorted(
        n for n in list(ENTRIES) + list(NOT_VERIFIABLE)
        if n not in public and n.split("_hidden")[0] not in public and not n.startswith(("map_", "filter_", "concat_map_", "flat_map_", "take_", "scan_", "on_backpressure_buffer_", "subscribe_on_", "parallel_"))
    )
    assert not stale, f"TCK lines naming no public method: {stale}"


def test_every_processor_has_a_tck_class() -> None:
    import rstreams.processors as procs

    with open(os.path.join(os.path.dirname(__file__), "..", "tck", "test_tck_library.py")) as f:
        text = f.read()
    names = [n for n in dir(procs) if n.endswith("Processor") and not n.startswith("_") and n != "FlowableProcessor"]
    assert names
    missing = [n for n in names if f"TestTck{n}" not in text]
    assert not missing, f"processors without a TCK class: {missing}"
