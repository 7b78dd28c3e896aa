"""Shared fixtures for the whole suite."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def undeliverable() -> Iterator[list[BaseException]]:
    """Collect the errors sent to the undeliverable-error hook during the test."""
    from rstreams import plugins

    with plugins.collect_errors() as errors:
        yield errors
