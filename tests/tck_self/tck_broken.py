"""Deliberately broken Publishers, Subscribers and Processors for the kit's self-tests.

Each is a small, naive implementation switched into a specific bug by a flag. Without flags they are
correct enough to pass the tests the self-tests run against them, so each failure is due to the flag.
"""

from __future__ import annotations

import gc
import threading
import time
from typing import Any

from rstreams import plugins
from rstreams._internal.requests import MAX_DEMAND, validate_request
from rstreams.tck import IdentityProcessor, WhiteboxSubscriberProbe

#: Subscribers leaked by the "keep_reference" flag (rule 3.13); tests clear it.
LEAK: list[Any] = []


class BrokenRange:
    """A synchronous range Publisher of ``n`` elements with opt-in bugs (``flags``)."""

    def __init__(self, n: int, *flags: str) -> None:
        self.n = n
        self.flags = set(flags)
        self._subscribers: list[Any] = []

    def subscribe(self, subscriber: Any) -> None:
        f = self.flags
        if subscriber is None:
            if "no_type_error" in f:
                return
            raise TypeError("subscribe(None)")
        if "raise_from_subscribe" in f:
            raise RuntimeError("cannot serve this subscriber")
        if "reject_same_twice" in f:
            if any(s is subscriber for s in self._subscribers):
                raise RuntimeError("already subscribed")
            self._subscribers.append(subscriber)
        sub = _BrokenSubscription(self, subscriber)
        if "signal_before_on_subscribe" in f:
            subscriber.on_complete()
        subscriber.on_subscribe(sub)
        if "on_subscribe_twice" in f:
            subscriber.on_subscribe(sub)
        if "emit_before_request" in f:
            sub.emit_unrequested()
        if self.n == 0 and "never_complete" not in f:
            sub.complete()


class _BrokenSubscription:
    def __init__(self, parent: BrokenRange, subscriber: Any) -> None:
        self.flags = parent.flags
        self.subscriber: Any = subscriber
        self.index = 0
        self.end = parent.n - (1 if "too_few" in parent.flags else 0) + (1 if "too_many" in parent.flags else 0)
        self.demand = 0
        self.total = 0
        self.cancelled = False
        self.done = False
        self.emitting = False
        self.in_cancel = False
        self.lock = threading.Lock()

    # -- signals ---------------------------------------------------------------------------------------
    def _on_next(self, item: int) -> bool:
        try:
            self.subscriber.on_next(item)
            return True
        except Exception as exc:
            f = self.flags
            if "propagate_errors" in f:
                raise
            if "ignore_errors" in f:
                return True
            self.cancelled = True
            if "swallow_errors" not in f:
                plugins.on_error(exc, "subscriber raised")
            return False

    def complete(self) -> None:
        if self.done and "signal_after_terminal" not in self.flags:
            return
        self.done = True
        self.subscriber.on_complete()

    def error(self, exc: BaseException) -> None:
        if "emit_after_error" not in self.flags:
            self.done = True
            self.cancelled = True
        self.subscriber.on_error(exc)

    def emit_unrequested(self) -> None:
        if self.index < self.end:
            self.index += 1
            self._on_next(self.index - 1)

    # -- Subscription ----------------------------------------------------------------------------------
    def request(self, n: Any) -> None:
        f = self.flags
        if "raise_from_request" in f:
            raise RuntimeError("request failed")
        if self.cancelled and "ignore_cancel" not in f:
            return
        if self.done and "signal_after_terminal" not in f:
            return
        if self.done and "signal_after_terminal" in f:
            self.subscriber.on_next(-1)
            return
        bad = validate_request(n)
        if "bool_is_one" in f and n is True:
            bad, n = None, 1
        if "huge_is_error" in f and isinstance(n, int) and n > MAX_DEMAND:
            self.error(ValueError("demand too large"))
            return
        if bad is not None:
            if "ignore_bad_request" in f:
                return
            if "raise_on_bad_request" in f:
                raise TypeError(f"bad request {n!r}")
            if "vague_bad_request" in f:
                self.error(ValueError("bad"))
                return
            self.error(bad)
            return
        if "error_at_max" in f and self.total + n >= MAX_DEMAND:
            self.error(ValueError("demand reached 2**63 - 1"))
            return
        if "overflow_error" in f and self.total + n > MAX_DEMAND:
            self.error(ValueError("demand overflow"))
            return
        if "error_on_reentrant_request" in f and self.emitting:
            self.error(RuntimeError("reentrant request"))
            return
        self.total += n
        self.demand = min(MAX_DEMAND, self.demand + n + (1 if "over_deliver" in f else 0))
        if "concurrent" in f:
            self._emit_concurrently()
            return
        if "deferred" in f:
            if not self.emitting:
                self.emitting = True
                threading.Timer(0.02, self._deferred_emit).start()
            return
        if "recursive" in f:
            self._emit_recursively()
            return
        if self.emitting:
            return  # trampoline: the outer loop emits
        self.emitting = True
        try:
            while self.demand > 0 and self.index < self.end and not (self.cancelled and "ignore_cancel" not in f):
                self.demand -= 1
                self.index += 1
                if not self._on_next(self.index - 1):
                    return
            if self.index >= self.end and not self.cancelled and "never_complete" not in f:
                self.complete()
        finally:
            self.emitting = False

    def _deferred_emit(self) -> None:
        while self.demand > 0 and self.index < self.end and not self.cancelled and not self.done:
            self.demand -= 1
            self.index += 1
            self._on_next(self.index - 1)
        if self.index >= self.end and not self.done and not self.cancelled:
            self.complete()
        self.emitting = False

    def _emit_recursively(self) -> None:
        if self.demand > 0 and self.index < self.end and not self.cancelled:
            self.demand -= 1
            self.index += 1
            self._on_next(self.index - 1)
        elif self.index >= self.end and not self.done:
            self.complete()

    def _emit_concurrently(self) -> None:
        def emit(i: int) -> None:
            self._on_next(i)

        while self.demand > 0 and self.index < self.end and not self.cancelled:
            self.demand -= 1
            self.index += 1
            threading.Thread(target=emit, args=(self.index - 1,), daemon=True).start()
        if self.index >= self.end and not self.done:
            self.done = True
            threading.Thread(target=self.subscriber.on_complete, daemon=True).start()

    def cancel(self) -> None:
        f = self.flags
        if "raise_on_second_cancel" in f and self.cancelled:
            raise RuntimeError("already cancelled")
        if "raise_on_cancel_after_complete" in f and self.done:
            raise RuntimeError("already completed")
        if "unsafe_cancel" in f:
            if self.in_cancel:
                raise RuntimeError("concurrent cancel")
            self.in_cancel = True
            time.sleep(0.005)
            self.in_cancel = False
        if "keep_reference" in f:
            LEAK.append(self.subscriber)
        if "old_cycle" in f:
            # not a bug: the subscription joins a reference cycle that a full collection promotes
            # to the oldest generation, so the Subscriber it holds is freed only by a full collection
            self.cycle = self
            gc.collect()
        if "cancel_floods" in f:
            while self.index < self.end:
                self.index += 1
                self._on_next(self.index - 1)
        if "ignore_cancel" in f:
            return
        self.cancelled = True


class FailedPublisher:
    """A 'failed publisher' with opt-in bugs: never signals on_error, or raises from subscribe."""

    def __init__(self, *flags: str) -> None:
        self.flags = set(flags)

    def subscribe(self, subscriber: Any) -> None:
        if subscriber is None:
            raise TypeError("subscribe(None)")
        if "raise_from_subscribe" in self.flags:
            raise RuntimeError("I am failed and I raise instead of signalling on_error")
        sub = _BrokenSubscription(BrokenRange(0), subscriber)
        sub.done = sub.cancelled = True
        subscriber.on_subscribe(sub)
        if "no_error" not in self.flags:
            subscriber.on_error(RuntimeError("failed publisher"))
            if "signal_after_error" in self.flags:
                subscriber.on_complete()


class BrokenSubscriber:
    """A Subscriber (whitebox when given a probe, blackbox otherwise) with opt-in bugs."""

    def __init__(self, probe: WhiteboxSubscriberProbe[Any] | None, *flags: str) -> None:
        self.probe = probe
        self.flags = set(flags)
        self.s: Any = None
        self.cancelled = False

    def on_subscribe(self, s: Any) -> None:
        f = self.flags
        if s is None:
            if "ignore_none" in f:
                return
            raise TypeError("on_subscribe(None)")
        if self.s is not None:
            if "no_cancel_second" in f:
                if "request_second" in f:
                    s.request(1)
                return
            s.cancel()
            return
        self.s = s
        if self.probe is not None and "no_register" not in f:
            self.probe.register_on_subscribe(self)
        if self.probe is None and "never_request" not in f:
            s.request(1)

    def on_next(self, item: Any) -> None:
        f = self.flags
        if item is None:
            if "ignore_none" in f:
                return
            raise TypeError("on_next(None)")
        if self.cancelled and "raise_after_cancel" in f:
            raise RuntimeError("on_next after cancel")
        if "raise_on_next" in f:
            raise RuntimeError("on_next failed")
        if self.probe is not None:
            self.probe.register_on_next(item)
        if "racy_requests" in f:
            t = threading.Thread(target=self.s.request, args=(1,), daemon=True)
            t.start()
            self.s.request(1)
            t.join(1)
        elif self.probe is None and "never_request" not in f and not self.cancelled:
            self.s.request(1)

    def on_error(self, error: BaseException) -> None:
        f = self.flags
        if error is None:
            if "ignore_none" in f:
                return
            raise TypeError("on_error(None)")
        if "raise_on_error" in f:
            raise RuntimeError("on_error failed")
        if "cancel_in_on_error" in f:
            self.s.cancel()
        if self.probe is not None:
            self.probe.register_on_error(error)
        if "request_after_terminal" in f:
            self.s.request(1)

    def on_complete(self) -> None:
        f = self.flags
        if "raise_on_complete" in f:
            raise RuntimeError("on_complete failed")
        if "request_in_on_complete" in f:
            self.s.request(1)
        if self.probe is not None:
            self.probe.register_on_complete()
        if "request_after_terminal" in f:
            self.s.request(1)

    # puppet
    def trigger_request(self, n: int) -> None:
        f = self.flags
        if "never_request" in f:
            return
        if "request_one_only" in f:
            n = 1
        self.s.request(n)

    def signal_cancel(self) -> None:
        if "no_cancel" in self.flags:
            return
        self.cancelled = True
        self.s.cancel()


class NoErrorPassingProcessor(IdentityProcessor[Any]):
    """Swallows upstream errors (rule 4.2)."""

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise TypeError("on_error(None)")


class StopsRequestingProcessor(IdentityProcessor[Any]):
    """Requests only once from upstream: late demand is never served (rule 2.1 for Processors)."""

    def _replenish(self) -> None:
        pass


class EagerProcessor(IdentityProcessor[Any]):
    """Emits to its Subscribers without waiting for their demand (rule 1.1)."""

    def _drain_once(self) -> None:
        while True:
            with self._lock:
                pending, self._pending = self._pending, []
                self._subs.extend(pending)
                subs = list(self._subs)
                item = self._queue.popleft() if self._queue and subs else None
                terminal = self._done and not self._queue
            for p in pending:
                if p.subscriber is not None:
                    p.subscriber.on_subscribe(p)
            if item is None:
                if terminal:
                    for p in subs:
                        s = p.subscriber
                        self._drop(p)
                        if s is not None:
                            s.on_complete()
                return
            for p in subs:
                if p.subscriber is not None:
                    p.subscriber.on_next(item)
            self._to_request += 1
            self._replenish()
