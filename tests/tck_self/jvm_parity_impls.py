"""Implementations for the kit's parity tests against the JVM TCK (``test_kit_parity_with_jvm_tck.py``).

Some are correct but unusual (slow, lazy about cancel, one-at-a-time demand, needing a nudge) and
must pass; the JVM kit passes them. Others are broken in a way the JVM kit catches and must fail.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

from rstreams._internal.requests import validate_request


class _NoopSubscription:
    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass


class DemandIgnoringSyncPublisher:
    """request(n) synchronously emits n + 1 elements (0..n), whatever was asked: request(2**63 - 1)
    never ends unless on_next raises (the JVM kit's demandIgnoringSynchronousPublisher)."""

    def subscribe(self, subscriber: Any) -> None:
        if subscriber is None:
            raise TypeError("subscribe(None)")

        class _Sub(_NoopSubscription):
            def request(self, n: int) -> None:
                i = 0
                while i <= n:
                    subscriber.on_next(i)
                    i += 1

        subscriber.on_subscribe(_Sub())


class ThreadedRangePublisher:
    """``count`` elements emitted one by one on a thread of their own per Subscription.

    ``delay``: seconds between elements; ``cancel_lag``: cancel is noticed only after that many
    seconds (elements already requested keep coming meanwhile: legal, rule 3.12 says "eventually");
    ``overdeliver``: one element more than requested after cancel (broken, rule 3.12);
    ``check_serial_requests``: signal on_error if request() is ever entered from two threads at
    once, relying on rule 2.7 (the Subscriber must call request/cancel serially).
    """

    def __init__(
        self,
        count: int,
        *,
        delay: float = 0.0,
        cancel_lag: float = 0.0,
        overdeliver: bool = False,
        check_serial_requests: bool = False,
    ) -> None:
        self.count = count
        self.delay = delay
        self.cancel_lag = cancel_lag
        self.overdeliver = overdeliver
        self.check_serial_requests = check_serial_requests

    def subscribe(self, subscriber: Any) -> None:
        if subscriber is None:
            raise TypeError("subscribe(None)")
        _ThreadedSubscription(self, subscriber).start()


class _ThreadedSubscription:
    def __init__(self, parent: ThreadedRangePublisher, subscriber: Any) -> None:
        self.parent = parent
        self.subscriber: Any = subscriber
        self.cond = threading.Condition()
        self.demand = 0
        self.index = 0
        self.cancel_at: float | None = None
        self.error: BaseException | None = None
        self.inside: int | None = None

    def start(self) -> None:
        self.subscriber.on_subscribe(self)
        threading.Thread(target=self._run, daemon=True, name="parity-threaded-range").start()

    def request(self, n: Any) -> None:
        me = threading.get_ident()
        with self.cond:
            if self.parent.check_serial_requests and self.inside is not None and self.inside != me:
                self.error = RuntimeError("request() entered from two threads at once: rule 2.7 broken")
            self.inside = me
        if self.parent.check_serial_requests:
            time.sleep(0.001)  # widen the window in which an overlapping call is seen
        with self.cond:
            self.inside = None
            bad = validate_request(n)
            if bad is not None:
                self.error = self.error or bad
            else:
                self.demand += n
            self.cond.notify_all()

    def cancel(self) -> None:
        with self.cond:
            if self.cancel_at is None:
                self.cancel_at = time.monotonic() + self.parent.cancel_lag
                if self.parent.overdeliver:
                    self.demand += 1
            self.cond.notify_all()

    def _cancelled(self) -> bool:
        return self.cancel_at is not None and time.monotonic() >= self.cancel_at

    def _run(self) -> None:
        p = self.parent
        while True:
            with self.cond:
                while not self._cancelled() and self.error is None and self.demand == 0 and self.index < p.count:
                    self.cond.wait(0.01)
                subscriber = self.subscriber
                if self._cancelled():
                    self.subscriber = None
                    return
                if self.error is not None or self.index >= p.count:
                    self.subscriber = None
                    error = self.error
                else:
                    self.demand -= 1
                    item = self.index
                    self.index += 1
            if subscriber is None:
                return
            if self.subscriber is None:  # terminal: signalled outside the lock
                if error is not None:
                    subscriber.on_error(error)
                else:
                    subscriber.on_complete()
                return
            subscriber.on_next(item)
            if p.delay:
                time.sleep(p.delay)


class DemandCheckingSubscriber:
    """A whitebox Subscriber that requests only from a timer thread, ``delay`` seconds after being
    triggered, and raises from on_next if an element arrives without demand (the JVM kit's
    "shouldWaitForDemandBeforeSignalling" Subscribers). ``one_at_a_time``: it requests 1 element at
    a time, the next one only after the previous arrived ("...ForOneAtATimeSubscribers")."""

    def __init__(self, probe: Any, *, delay: float = 0.05, one_at_a_time: bool = False) -> None:
        self.probe = probe
        self.delay = delay
        self.one_at_a_time = one_at_a_time
        self.s: Any = None
        self.lock = threading.Lock()  # request/cancel are called serially (rule 2.7)
        self.outstanding = 0  # triggered but not yet requested (one_at_a_time)
        self.demand = 0
        self.requesting = False

    def _later(self, fn: Any) -> None:
        t = threading.Timer(self.delay, fn)
        t.daemon = True
        t.start()

    def _request(self, n: int) -> None:
        with self.lock:
            self.demand += n
            self.s.request(n)

    def _request_one(self) -> None:
        with self.lock:
            self.requesting = False
            if self.outstanding <= 0:
                return
            self.outstanding -= 1
            self.demand += 1
            self.s.request(1)

    def _schedule_one(self) -> None:
        with self.lock:
            if self.requesting or self.outstanding <= 0 or self.demand > 0:
                return
            self.requesting = True
        self._later(self._request_one)

    def on_subscribe(self, s: Any) -> None:
        if s is None:
            raise TypeError("on_subscribe(None)")
        if self.s is not None:
            s.cancel()
            return
        self.s = s
        self.probe.register_on_subscribe(self)

    def on_next(self, item: Any) -> None:
        if item is None:
            raise TypeError("on_next(None)")
        with self.lock:
            if self.demand <= 0:
                raise RuntimeError("on_next signalled without demand!")
            self.demand -= 1
        self.probe.register_on_next(item)
        if self.one_at_a_time:
            self._schedule_one()

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise TypeError("on_error(None)")
        self.probe.register_on_error(error)

    def on_complete(self) -> None:
        self.probe.register_on_complete()

    # puppet
    def trigger_request(self, n: int) -> None:
        if self.one_at_a_time:
            with self.lock:
                self.outstanding += n
            self._schedule_one()
        else:
            self._later(lambda: self._request(n))

    def signal_cancel(self) -> None:
        def cancel() -> None:
            with self.lock:
                self.s.cancel()

        self._later(cancel)


class NudgedSubscriber:
    """A blackbox Subscriber that requests only when nudged (the verification's trigger_request hook
    calls :meth:`start`). ``broken_unstarted_complete``: its on_complete/on_error fail when no request
    was ever made (a bug only a test "without preceding request" can find)."""

    def __init__(self, broken_unstarted_complete: bool = False) -> None:
        self.broken = broken_unstarted_complete
        self.s: Any = None
        self.started = False

    def start(self) -> None:
        self.started = True
        self.s.request(1)

    def on_subscribe(self, s: Any) -> None:
        if s is None:
            raise TypeError("on_subscribe(None)")
        if self.s is not None:
            s.cancel()
            return
        self.s = s

    def on_next(self, item: Any) -> None:
        if item is None:
            raise TypeError("on_next(None)")
        self.s.request(1)

    def _check(self) -> None:
        if self.broken and not self.started:
            raise AttributeError("'NudgedSubscriber' has no buffer yet (nothing was ever requested)")

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise TypeError("on_error(None)")
        self._check()

    def on_complete(self) -> None:
        self._check()


class MulticastProcessor:
    """A non-coordinated identity Processor: each Subscriber has its own unbounded queue and demand,
    so one Subscriber without demand never stalls another; the upstream is kept ``buffer_size``
    elements ahead. ``drop_without_demand`` (broken): an element that arrives while a Subscriber has
    no outstanding demand is dropped for that Subscriber instead of being kept until it asks."""

    def __init__(self, buffer_size: int, *, drop_without_demand: bool = False) -> None:
        self._lock = threading.Lock()
        self._subs: list[_Downstream] = []
        self._upstream: Any = None
        self._terminal: tuple[str, BaseException | None] | None = None
        self._buffer = max(1, buffer_size)
        self.drop_without_demand = drop_without_demand

    def subscribe(self, subscriber: Any) -> None:
        if subscriber is None:
            raise TypeError("subscribe(None)")
        d = _Downstream(self, subscriber)
        with self._lock:
            self._subs.append(d)
            terminal = self._terminal
        subscriber.on_subscribe(d)
        if terminal is not None:
            d.terminate(terminal)

    def _remove(self, d: _Downstream) -> None:
        with self._lock:
            if d in self._subs:
                self._subs.remove(d)

    def on_subscribe(self, s: Any) -> None:
        if s is None:
            raise TypeError("on_subscribe(None)")
        if self._upstream is not None:
            s.cancel()
            return
        self._upstream = s
        s.request(self._buffer)

    def on_next(self, item: Any) -> None:
        if item is None:
            raise TypeError("on_next(None)")
        with self._lock:
            subs = list(self._subs)
        for d in subs:
            d.offer(item)
        self._upstream.request(1)

    def _terminate(self, terminal: tuple[str, BaseException | None]) -> None:
        with self._lock:
            self._terminal = terminal
            subs = list(self._subs)
        for d in subs:
            d.terminate(terminal)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise TypeError("on_error(None)")
        self._terminate(("error", error))

    def on_complete(self) -> None:
        self._terminate(("complete", None))


class _Downstream:
    def __init__(self, parent: MulticastProcessor, subscriber: Any) -> None:
        self.parent = parent
        self.subscriber: Any = subscriber
        self.lock = threading.Lock()
        self.queue: deque[Any] = deque()
        self.demand = 0
        self.terminal: tuple[str, BaseException | None] | None = None
        self.done = False
        self.emitting = False

    def offer(self, item: Any) -> None:
        with self.lock:
            if self.done or self.terminal is not None:
                return
            if self.parent.drop_without_demand and self.demand - len(self.queue) <= 0:
                return
            self.queue.append(item)
        self._drain()

    def terminate(self, terminal: tuple[str, BaseException | None]) -> None:
        with self.lock:
            if terminal[0] == "error":
                self.queue.clear()  # errors are passed on at once (rule 4.2), never queued
            self.terminal = terminal
        self._drain()

    def request(self, n: Any) -> None:
        bad = validate_request(n)
        with self.lock:
            if bad is not None:
                self.queue.clear()
                self.terminal = ("error", bad)
            else:
                self.demand += n
        self._drain()

    def cancel(self) -> None:
        with self.lock:
            self.done = True
            self.queue.clear()
            self.subscriber = None
        self.parent._remove(self)

    def _drain(self) -> None:
        with self.lock:
            if self.emitting:
                return
            self.emitting = True
        while True:
            with self.lock:
                subscriber = self.subscriber
                if self.done or subscriber is None:
                    self.emitting = False
                    return
                if self.queue and self.demand > 0:
                    self.demand -= 1
                    signal: tuple[str, Any] = ("next", self.queue.popleft())
                elif self.terminal is not None and not self.queue:
                    signal = self.terminal
                    self.done = True
                    self.subscriber = None
                else:
                    self.emitting = False
                    return
            kind, value = signal
            if kind == "next":
                subscriber.on_next(value)
            elif kind == "error":
                subscriber.on_error(value)
                self.parent._remove(self)
            else:
                subscriber.on_complete()
                self.parent._remove(self)
