"""Fixtures the rule-level tests share with the module that holds the other tests of their topic."""

from __future__ import annotations

# the event loop on its own thread that ``test_rules_from_future_asyncio`` completes futures on
from interop.test_from_future_asyncio import loop  # noqa: F401

