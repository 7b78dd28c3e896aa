"""Duck-typed introspection of a running chain (``rstreams.debug.describe``, metrics' ``queued``).

Operator subscribers are also their downstream's Subscription and keep their upstream Subscription
in ``upstream`` or ``_upstream``; many keep demand in ``_requested`` (an AtomicInt or an int), a
queue in ``_queue``/``queue`` (a deque of elements, or of batch wrappers with ``items``) and
terminal state in ``done``/``_done``/``_cancelled``. Reading them from another thread is a racy
look (a recent value, never a torn one): good for a picture of a stalled pipeline, not for
decisions. Objects that keep none of these show their type only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .atomics import AtomicInt, AtomicRef

__all__ = ["StageState", "chain_of", "demand_of", "queued_of", "state_of", "upstream_of"]

_MAX_CHAIN = 256  # a cycle or a pathological chain ends the walk


def _attr(obj: Any, *names: str) -> Any:
    for n in names:
        try:
            v = getattr(obj, n)
        except Exception:  # noqa: BLE001 - a property may raise: treat as absent
            continue
        if v is not None:
            return v
    return None


def queued_of(obj: Any) -> int | None:
    """Elements waiting in ``obj``'s queue, or None when it has none."""
    q = _attr(obj, "_queue", "queue")
    if q is None or not hasattr(q, "__iter__") or isinstance(q, (str, bytes)):
        return None
    try:
        items = list(q)  # a copy: the owner may append meanwhile
    except RuntimeError:  # mutated during the copy: one more try later is the caller's choice
        return None
    total = 0
    for x in items:
        inner = getattr(x, "items", None)
        total += len(inner) if isinstance(inner, list) else 1
    return total


def demand_of(obj: Any) -> int | None:
    """The outstanding demand ``obj`` keeps (``_requested``), or None."""
    r = _attr(obj, "_requested", "requested")
    if isinstance(r, AtomicInt):
        return r.get()
    if type(r) is int:
        return r
    return None


def _terminal(obj: Any) -> str:
    if _attr(obj, "_cancelled", "cancelled", "is_cancelled") is True:
        return "cancelled"
    if _attr(obj, "done", "_done") is True:
        return "upstream-done"  # its terminal signal arrived; it may still hold elements
    return "live"


@dataclass(frozen=True)
class StageState:
    """What one link of a running chain shows: its type, demand, queue, state and worker."""

    kind: str
    demand: int | None
    queued: int | None
    state: str
    worker: str | None
    obj: Any

    def line(self) -> str:
        parts = [self.kind]
        if self.demand is not None:
            parts.append("demand=unbounded" if self.demand >= 2**63 - 1 else f"demand={self.demand}")
        if self.queued is not None:
            parts.append(f"queued={self.queued}")
        parts.append(self.state)
        if self.worker is not None:
            parts.append(f"on {self.worker}")
        return " ".join(parts)


def state_of(obj: Any) -> StageState:
    worker = _attr(obj, "_worker", "worker")
    return StageState(
        type(obj).__name__.lstrip("_"),
        demand_of(obj),
        queued_of(obj),
        _terminal(obj),
        None if worker is None else type(worker).__name__.lstrip("_"),
        obj,
    )


def upstream_of(obj: Any) -> Any:
    """The upstream Subscription ``obj`` keeps, or None."""
    up = _attr(obj, "upstream", "_upstream")
    if isinstance(up, AtomicRef):  # a subscriber that keeps its upstream in an atomic slot
        up = up.get()
    return up


def chain_of(subscription: Any) -> list[Any]:
    """The links from ``subscription`` up to the source's subscription (sink side first)."""
    out: list[Any] = []
    seen: set[int] = set()
    obj = subscription
    while obj is not None and id(obj) not in seen and len(out) < _MAX_CHAIN:
        seen.add(id(obj))
        out.append(obj)
        obj = upstream_of(obj)
    return out
