"""Lock-backed atomics: correct with or without the GIL.

Every compare-and-set, get-and-add or "once" in rstreams goes through these classes, so that the
implementation can change (today a ``threading.Lock`` per object) without touching operators.
Plain reads (:meth:`AtomicInt.get`) are single attribute loads and need no lock: an attribute read
of an int or object reference is atomic in CPython, with or without the GIL (free-threaded builds
guarantee it per object). A few per-element hot paths (flat_map's emitter, the scalar
subscriptions, the processors' demand checks) read ``._value`` directly: the same single load as
``get()`` without the method call. Writes go through the methods or the named operations of
``_internal`` that spell out a method's body to save a call (:func:`rstreams._internal.drain.enter`/
``leave``, :func:`rstreams._internal.requests.add_request`). One exception: the per-item drains of
the Unicast, Multicast and Replay processors write enter/leave out on ``_lock``/``_value``, where the
two calls measured about 8% of a processor's per-item time. Cost of a write: one uncontended lock round trip (~60 ns); use once per batch, never once
per item.

Example::

    wip = AtomicInt()
    if wip.get_and_increment() == 0:   # race: several producers, one drainer
        drain()
"""

from __future__ import annotations

import sys
import threading
from typing import Final, Generic, TypeVar, final

__all__ = ["AtomicInt", "AtomicRef", "AtomicFlag", "SEQUENTIAL_ATTRIBUTES"]


def _gil_enabled() -> bool:
    probe = getattr(sys, "_is_gil_enabled", None)
    return True if probe is None else bool(probe())


#: True when the interpreter runs one thread's bytecode at a time (the GIL): plain attribute reads
#: and writes are then sequentially consistent, which a few per-element fast paths use instead of
#: a lock (a lock round trip costs ~0.3-0.6 us here, as much as a whole operator stage). On a
#: free-threaded build this is False and those paths take their locked variant: nothing in
#: rstreams depends on the GIL for correctness.
SEQUENTIAL_ATTRIBUTES: Final[bool] = _gil_enabled()

T = TypeVar("T")


@final
class AtomicInt:
    """An int with atomic read-modify-write operations (Python ints never overflow)."""

    __slots__ = ("_value", "_lock")

    def __init__(self, value: int = 0) -> None:
        self._value = value
        self._lock = threading.Lock()

    def get(self) -> int:
        return self._value

    def set(self, value: int) -> None:
        with self._lock:
            self._value = value

    def get_and_set(self, value: int) -> int:
        with self._lock:
            old = self._value
            self._value = value
            return old

    def get_and_add(self, delta: int) -> int:
        with self._lock:
            old = self._value
            self._value = old + delta
            return old

    def add_and_get(self, delta: int) -> int:
        with self._lock:
            self._value += delta
            return self._value

    def get_and_increment(self) -> int:
        with self._lock:
            old = self._value
            self._value = old + 1
            return old

    def increment_and_get(self) -> int:
        with self._lock:
            self._value += 1
            return self._value

    def decrement_and_get(self) -> int:
        with self._lock:
            self._value -= 1
            return self._value

    def compare_and_set(self, expect: int, update: int) -> bool:
        with self._lock:
            if self._value == expect:
                self._value = update
                return True
            return False

    def __repr__(self) -> str:
        return f"AtomicInt({self._value})"


@final
class AtomicRef(Generic[T]):
    """An object reference with atomic swap and identity compare-and-set."""

    __slots__ = ("_value", "_lock")

    def __init__(self, value: T) -> None:
        self._value = value
        self._lock = threading.Lock()

    def get(self) -> T:
        return self._value

    def set(self, value: T) -> None:
        with self._lock:
            self._value = value

    def get_and_set(self, value: T) -> T:
        with self._lock:
            old = self._value
            self._value = value
            return old

    def compare_and_set(self, expect: T, update: T) -> bool:
        """Set to ``update`` if the current value *is* ``expect`` (identity)."""
        with self._lock:
            if self._value is expect:
                self._value = update
                return True
            return False

    def __repr__(self) -> str:
        return f"AtomicRef({self._value!r})"


@final
class AtomicFlag:
    """A boolean that can be raised once: :meth:`try_set` returns True for exactly one caller."""

    __slots__ = ("_value", "_lock")

    def __init__(self, lock: threading.Lock | None = None) -> None:
        self._value = False
        # ``lock``: a lock the owner already has and never holds while calling try_set
        self._lock = lock if lock is not None else threading.Lock()

    def is_set(self) -> bool:
        return self._value

    def try_set(self) -> bool:
        """Raise the flag; True only for the caller that raised it first (race: "once")."""
        if self._value:
            return False
        with self._lock:
            if self._value:
                return False
            self._value = True
            return True

    def __bool__(self) -> bool:
        return self._value

    def __repr__(self) -> str:
        return f"AtomicFlag({self._value})"
