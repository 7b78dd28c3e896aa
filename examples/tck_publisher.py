"""A hand-written Reactive Streams Publisher, verified by the rstreams TCK.

``RangePublisher(start, count)`` emits ``count`` ints from ``start``. It is written from the rules
alone (no rstreams base classes): demand is counted (rule 3.17: capped at ``MAX_DEMAND``), signals are
serialized by a "draining" flag so a ``request`` made inside ``on_next`` does not recurse (rules 1.3,
3.3), a non-positive request becomes ``on_error(ValueError)`` (rule 3.9), ``cancel`` stops the
signals (rules 3.5, 3.7), nothing is signalled after a terminal signal (rule 1.7), and a Subscriber
that raises is treated as cancelled, its error reported to ``rstreams.plugins`` (rule 2.13).

    python examples/tck_publisher.py        # runs the kit, prints its rule-by-rule table
    python -m rstreams.tck examples.tck_publisher:make_range --kind publisher   # the same, from the CLI

Under pytest the same check is a class: see ``TestRangePublisher`` at the end.
"""

from __future__ import annotations

import threading
from typing import Any

from rstreams import MAX_DEMAND, plugins


# --8<-- [start:publisher]
class RangePublisher:
    """Emits ``count`` ints from ``start`` to each subscriber (a cold Publisher)."""

    def __init__(self, start: int, count: int) -> None:
        self.start, self.end = start, start + count

    def subscribe(self, subscriber: Any) -> None:
        if subscriber is None:
            raise TypeError("rule 1.9: subscribe(None)")
        subscription = _RangeSubscription(subscriber, self.start, self.end)
        subscriber.on_subscribe(subscription)
        if self.start >= self.end:
            subscription.drain()  # an empty range completes without waiting for demand


class _RangeSubscription:
    def __init__(self, subscriber: Any, index: int, end: int) -> None:
        self._subscriber = subscriber
        self._index, self._end = index, end
        self._lock = threading.Lock()  # request/cancel may come from any thread
        self._demand = 0
        self._draining = False  # one thread emits at a time; others only add demand (rule 1.3)
        self._done = False  # cancelled or terminated: no more signals (rules 1.7, 3.7)
        self._error: BaseException | None = None

    def request(self, n: int) -> None:
        with self._lock:
            if self._done:
                return
            if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
                self._error = ValueError(f"rule 3.9: request({n!r}), n must be a positive int")
            else:
                self._demand = min(self._demand + n, MAX_DEMAND)
        self.drain()

    def cancel(self) -> None:
        with self._lock:
            self._done = True
            self._subscriber = None  # rule 3.13: drop the reference

    def drain(self) -> None:
        with self._lock:
            if self._draining:
                return  # the running loop sees the new demand (no recursion: rule 3.3)
            self._draining = True
        while True:
            with self._lock:
                subscriber = self._subscriber
                if self._done or subscriber is None:
                    self._draining = False
                    return
                if self._error is not None or self._index >= self._end:
                    self._done, error = True, self._error
                    self._subscriber = None
                    self._draining = False
                    kind = "error"
                elif self._demand == 0:
                    self._draining = False
                    return
                else:
                    item = self._index
                    self._index += 1
                    if self._demand < MAX_DEMAND:
                        self._demand -= 1
                    kind = "next"
            try:
                if kind == "next":
                    subscriber.on_next(item)
                    continue
                if error is not None:
                    subscriber.on_error(error)
                else:
                    subscriber.on_complete()
                return
            except Exception as exc:  # rule 2.13: a raising Subscriber ends its subscription
                self.cancel()
                with self._lock:
                    self._draining = False
                plugins.on_error(exc, "RangePublisher: the Subscriber raised")
                return
# --8<-- [end:publisher]


def make_range(n: int) -> RangePublisher:
    """The factory form, for the command line: python -m rstreams.tck examples.tck_publisher:make_range"""
    return RangePublisher(0, n)


try:  # the pytest form: `pytest examples/tck_publisher.py`
    from rstreams.tck import PublisherVerification

    class TestRangePublisher(PublisherVerification):
        def create_publisher(self, n: int) -> RangePublisher:
            return RangePublisher(0, n)

        def create_failed_publisher(self) -> None:
            return None  # this publisher cannot fail
except ImportError:  # pragma: no cover
    pass


def main() -> int:
    from rstreams.tck import format_table, run_verification

    results = run_verification(TestRangePublisher)
    print(format_table(results))
    failed = [r for r in results if r.is_required_failure]
    print(f"RangePublisher: {len(results)} TCK tests, {len(failed)} required failures")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
