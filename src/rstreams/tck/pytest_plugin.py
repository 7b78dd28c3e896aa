"""pytest plugin of :mod:`rstreams.tck` (registered through the ``pytest11`` entry point).

It only registers the ``tck`` marker; it imports nothing heavy and changes no behaviour of
unrelated tests. The verification classes work without it (they are plain pytest classes).
"""

from __future__ import annotations

from typing import Any


def pytest_configure(config: Any) -> None:
    """Register the ``tck`` marker used by the kit's own test modules."""
    config.addinivalue_line("markers", "tck: a Reactive Streams TCK verification (rstreams.tck)")
