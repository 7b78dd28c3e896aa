"""Recording test doubles shared by the toolkit tests."""

from __future__ import annotations

import threading
import time
from typing import Any

_COMPLETE = ("complete",)


class RecordingSubscription:
    """An upstream that records every request amount and cancel call (thread-safe)."""

    def __init__(self, name: str = "up", yield_in_cancel: bool = False) -> None:
        self.name = name
        self.requests: list[int] = []
        self.cancels = 0
        self._lock = threading.Lock()
        self._yield_in_cancel = yield_in_cancel

    def request(self, n: int) -> None:
        with self._lock:
            self.requests.append(n)

    def cancel(self) -> None:
        if self._yield_in_cancel:
            time.sleep(0)  # widen the window in which another thread can run (correct code must not care)
        with self._lock:
            self.cancels += 1

    @property
    def total(self) -> int:
        return sum(self.requests)

    def __repr__(self) -> str:
        return f"RecordingSubscription({self.name}, requests={self.requests}, cancels={self.cancels})"


class RecordingSubscriber:
    """Records signals as events; counts overlapping signal calls (rule 1.3 serial signalling)."""

    def __init__(self, yield_in_on_next: bool = False) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.subscription: Any = None
        self.overlaps = 0
        self._inside = 0
        self._guard = threading.Lock()  # protects the detector itself, not the code under test
        self._yield = yield_in_on_next

    def _enter(self) -> None:
        with self._guard:
            self._inside += 1
            if self._inside > 1:
                self.overlaps += 1

    def _leave(self) -> None:
        with self._guard:
            self._inside -= 1

    def on_subscribe(self, s: Any) -> None:
        self._enter()
        self.subscription = s
        self.events.append(("subscribe", s))
        self._leave()

    def on_next(self, item: Any) -> None:
        self._enter()
        if self._yield:
            time.sleep(0)
        self.events.append(("next", item))
        self._leave()

    def on_error(self, error: BaseException) -> None:
        self._enter()
        self.events.append(("error", error))
        self._leave()

    def on_complete(self) -> None:
        self._enter()
        self.events.append(_COMPLETE)
        self._leave()

    @property
    def values(self) -> list[Any]:
        return [e[1] for e in self.events if e[0] == "next"]

    @property
    def terminals(self) -> list[tuple[Any, ...]]:
        return [e for e in self.events if e[0] in ("error", "complete")]


class NoLock:
    """A stand-in for ``threading.Lock`` that guards nothing (used to remove a guard)."""

    def __enter__(self) -> NoLock:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def acquire(self, *args: object) -> bool:
        return True

    def release(self) -> None:
        return None
