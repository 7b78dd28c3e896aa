"""Helpers for the asyncio bridge tests: bounded asyncio.run and leak checks."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# Threads that are shared and long-lived by design (started lazily, daemon).
_SHARED_PREFIXES = ("rstreams-aio-loop", "rstreams-io", "rstreams-computation", "rstreams-single", "asyncio_")


def run(coro: Coroutine[Any, Any, T], timeout: float = 2.0) -> T:
    """``asyncio.run`` bounded in time; afterwards no task of ours is left pending."""

    async def main() -> T:
        result = await asyncio.wait_for(coro, timeout)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
        assert not pending, f"tasks left pending: {pending!r}"
        return result

    return asyncio.run(main())


def own_threads() -> set[str]:
    """Names of live threads that are not the shared pools / the background loop."""
    return {
        t.name
        for t in threading.enumerate()
        if t is not threading.main_thread() and not t.name.startswith(_SHARED_PREFIXES)
    }
