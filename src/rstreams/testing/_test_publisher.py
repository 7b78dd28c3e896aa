"""TestPublisher: a Publisher driven by hand from a test, compliant or deliberately rule-breaking.

The test decides when each signal is sent (``next``, ``complete``, ``error``); the publisher records
what its subscribers did (``request``, ``cancel``) so the test can assert on it. It multicasts: every
current subscriber receives every signal. A subscriber that arrives after the terminal signal
receives ``on_subscribe`` and then that terminal signal at once.

Thread safety: state is guarded by one lock, never held while calling a subscriber. Signals sent
from several test threads at once are not serialized (a test may want exactly that overlap).
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Iterable
from typing import Any, ClassVar, Generic, TypeVar, final

from .._internal import plugins
from .._internal.requests import add_cap, validate_request
from .._spec import MAX_DEMAND, Subscriber, null_element_message, violation
from ..errors import NoneElementError

__all__ = ["TestPublisher", "Violation"]

T = TypeVar("T")


class Violation(enum.Enum):
    """The rules a :meth:`TestPublisher.create_noncompliant` publisher is allowed to break.

    Example::

        tp = TestPublisher.create_noncompliant(Violation.REQUEST_OVERFLOW)
        tp.next(1, 2, 3)   # emitted even though nobody requested anything (rule 1.1 broken)
    """

    #: ``next`` emits regardless of the subscribers' demand (breaks rule 1.1).
    REQUEST_OVERFLOW = "request_overflow"
    #: ``next(None)`` is passed on to the subscribers (breaks rule 2.13 from the Publisher side).
    ALLOW_NONE = "allow_none"
    #: Terminal signals do not drop the subscribers: ``next``, ``complete`` and ``error`` still reach
    #: them after a terminal signal, any number of times (breaks rules 1.7 and 1.6).
    CLEANUP_ON_TERMINATE = "cleanup_on_terminate"
    #: ``cancel`` is recorded but ignored: signals keep reaching the cancelled subscriber and its
    #: requests still count (breaks rules 1.8, 3.6 and 3.12).
    DEFER_CANCELLATION = "defer_cancellation"


@final
class _TestSubscription(Generic[T]):
    """The Subscription handed to one subscriber; all its state is guarded by the parent's lock."""

    __slots__ = ("_parent", "subscriber", "demand", "cancelled", "terminated", "active")

    def __init__(self, parent: TestPublisher[T], subscriber: Subscriber[T]) -> None:
        self._parent = parent
        self.subscriber = subscriber
        self.demand = 0  # outstanding; MAX_DEMAND is sticky (unbounded)
        self.cancelled = False  # the subscriber called cancel()
        self.terminated = False  # the publisher ended it: terminal signal, rule 3.9, subscriber raised
        self.active = False  # in the parent's list of subscribers that receive signals

    def request(self, n: int) -> None:
        self._parent._on_request(self, n)

    def cancel(self) -> None:
        self._parent._on_cancel(self)

    def __repr__(self) -> str:
        return f"<TestPublisher subscription demand={self.demand} cancelled={self.cancelled}>"


class TestPublisher(Generic[T]):
    """A Publisher the test drives by hand; records requests and cancellation.

    Example::

        tp = TestPublisher[int].create()
        ts = TestSubscriber[int](2)
        tp.subscribe(ts)
        tp.assert_min_requested(2).next(1, 2).complete()
        ts.assert_result(1, 2)

    A compliant publisher (:meth:`create`) refuses to break the rules: ``next`` beyond a
    subscriber's demand, ``next(None)`` and signals after a terminal signal raise in the *test*
    (``AssertionError`` naming the rule, or ``TypeError`` for ``None``); nothing is emitted then.
    ``request(n <= 0)`` is answered with ``on_error(ValueError)`` naming rule 3.9 (in every mode).
    An exception raised by a subscriber's signal method drops that subscriber and goes to the
    :mod:`rstreams.plugins` error hook (rule 2.13).
    """

    __test__: ClassVar[bool] = False  # tell pytest this is not a test class

    def __init__(self, violations: Iterable[Violation] = ()) -> None:
        """Prefer :meth:`create` and :meth:`create_noncompliant`."""
        self._violations: frozenset[Violation] = frozenset(violations)
        for v in self._violations:
            if not isinstance(v, Violation):
                raise TypeError(f"expected Violation members, got {v!r}")
        self._overflow = Violation.REQUEST_OVERFLOW in self._violations
        self._allow_none = Violation.ALLOW_NONE in self._violations
        self._keep_after_terminate = Violation.CLEANUP_ON_TERMINATE in self._violations
        self._ignore_cancel = Violation.DEFER_CANCELLATION in self._violations
        self._lock = threading.Lock()
        self._subs: list[_TestSubscription[T]] = []
        self._terminal: BaseException | None | bool = False  # False: not terminated; None: completed
        self._subscribe_calls = 0
        self._request_calls: list[int] = []
        self._was_cancelled = False

    @classmethod
    def create(cls) -> TestPublisher[T]:
        """A TestPublisher that obeys the rules (it raises in the test rather than break one).

        Example::

            tp = TestPublisher[str].create()
        """
        return cls()

    @classmethod
    def create_noncompliant(cls, *violations: Violation | Iterable[Violation]) -> TestPublisher[T]:
        """A TestPublisher allowed to break the given rules; members or sets of :class:`Violation`.

        Example::

            tp = TestPublisher[int].create_noncompliant(Violation.REQUEST_OVERFLOW, Violation.ALLOW_NONE)
            tp = TestPublisher[int].create_noncompliant({Violation.DEFER_CANCELLATION})
        """
        flat: list[Violation] = []
        for v in violations:
            if isinstance(v, Violation):
                flat.append(v)
            elif isinstance(v, str | bytes) or not isinstance(v, Iterable):
                # a string is iterable too: without this check "REQUEST_OVERFLOW" would be
                # reported one character at a time
                raise TypeError(
                    f"create_noncompliant() takes Violation members or collections of them, got {v!r}; "
                    f"use for example Violation.{Violation.REQUEST_OVERFLOW.name}"
                )
            else:
                flat.extend(v)
        return cls(flat)

    @property
    def violations(self) -> frozenset[Violation]:
        """The rules this publisher may break (empty when compliant)."""
        return self._violations

    # ------------------------------------------------------------------ Publisher

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        """Call ``subscriber.on_subscribe`` with a recording Subscription (``None`` raises TypeError, rule 1.9).

        Example::

            tp.subscribe(ts)
            tp.assert_subscribers(1)
        """
        if subscriber is None:
            raise NoneElementError(null_element_message("subscribe", "1.9"))
        sub = _TestSubscription(self, subscriber)
        with self._lock:
            self._subscribe_calls += 1
        self._signal(sub, "on_subscribe", sub)
        # Added only after on_subscribe returned, so no signal can overtake it (rule 1.9).
        with self._lock:
            if sub.terminated or (sub.cancelled and not self._ignore_cancel):
                return
            terminal = self._terminal
            if terminal is False:
                sub.active = True
                self._subs.append(sub)
                return
            sub.terminated = True
        if terminal is None:
            self._signal(sub, "on_complete")
        else:
            self._signal(sub, "on_error", terminal)

    # ------------------------------------------------------------------ driving

    def next(self, *items: T) -> TestPublisher[T]:
        """Send ``items`` to every current subscriber, in order.

        Compliant: raises (and sends nothing) if an item is ``None`` (TypeError), if a subscriber
        has requested fewer than ``len(items)`` (AssertionError, rule 1.1) or after a terminal
        signal (AssertionError, rule 1.7).

        Example::

            tp.next(1, 2, 3)
        """
        if not self._allow_none and any(x is None for x in items):
            raise NoneElementError(null_element_message("TestPublisher.next"))
        with self._lock:
            self._check_not_terminated_locked(f"next({', '.join(map(repr, items[:5]))})")
            subs = list(self._subs)
            if not self._overflow:
                for i, s in enumerate(subs):
                    if s.demand < len(items):
                        raise AssertionError(
                            violation(
                                "1.1",
                                f"TestPublisher.next() of {len(items)} item(s) but subscriber #{i} "
                                f"({s.subscriber!r}) has an outstanding demand of {s.demand}; use "
                                "create_noncompliant(Violation.REQUEST_OVERFLOW) to emit regardless",
                            )
                        )
        for item in items:
            for s in subs:
                with self._lock:
                    if not s.active:  # cancelled, terminated or raised meanwhile
                        continue
                    if s.demand < MAX_DEMAND and s.demand > 0:
                        s.demand -= 1
                self._signal(s, "on_next", item)
        return self

    def emit(self, *items: T) -> TestPublisher[T]:
        """``next(*items)`` then ``complete()``.

        Example::

            tp.emit("a", "b")
        """
        return self.next(*items).complete()

    def complete(self) -> TestPublisher[T]:
        """Send ``on_complete`` to every current subscriber (and later ones).

        Example::

            tp.complete()
        """
        return self._terminate(None)

    def error(self, error: BaseException) -> TestPublisher[T]:
        """Send ``on_error(error)`` to every current subscriber (and later ones).

        Example::

            tp.error(ValueError("boom"))
        """
        if error is None:
            raise NoneElementError(null_element_message("TestPublisher.error"))
        if not isinstance(error, BaseException):
            raise TypeError(f"TestPublisher.error() needs an exception, got {error!r}")
        return self._terminate(error)

    # ------------------------------------------------------------------ state

    @property
    def subscriber_count(self) -> int:
        """How many subscribers currently receive signals."""
        with self._lock:
            return len(self._subs)

    @property
    def has_subscribers(self) -> bool:
        """True while at least one subscriber receives signals (as the processors' property)."""
        with self._lock:
            return bool(self._subs)

    @property
    def requested(self) -> int:
        """The outstanding demand of the current subscribers, summed (capped at ``2**63 - 1``)."""
        with self._lock:
            total = 0
            for s in self._subs:
                total = add_cap(total, s.demand)
            return total

    @property
    def request_calls(self) -> list[int]:
        """Every ``request(n)`` argument received from any subscriber, in order (invalid ones too)."""
        with self._lock:
            return list(self._request_calls)

    @property
    def was_cancelled(self) -> bool:
        """True once any subscriber called ``cancel()``."""
        return self._was_cancelled

    @property
    def is_terminated(self) -> bool:
        """True once ``complete()`` or ``error()`` was called."""
        return self._terminal is not False

    # ------------------------------------------------------------------ assertions

    def assert_was_subscribed(self) -> TestPublisher[T]:
        """Assert ``subscribe`` was called at least once.

        Example::

            tp.assert_was_subscribed()
        """
        if not self._subscribe_calls:
            raise AssertionError(
                "expected the TestPublisher to be subscribed to, but subscribe() was never called"
            )
        return self

    def assert_was_not_subscribed(self) -> TestPublisher[T]:
        """Assert ``subscribe`` was never called."""
        if self._subscribe_calls:
            raise AssertionError(f"expected no subscribe() call but got {self._subscribe_calls}")
        return self

    def assert_was_requested(self) -> TestPublisher[T]:
        """Assert some subscriber called ``request`` at least once.

        Example::

            tp.assert_was_requested()
        """
        if not self._request_calls:
            raise AssertionError("expected a request(n) from a subscriber, but none arrived")
        return self

    def assert_was_not_requested(self) -> TestPublisher[T]:
        """Assert no subscriber ever called ``request``."""
        calls = self.request_calls
        if calls:
            raise AssertionError(f"expected no request(n) but got request calls {calls}")
        return self

    def assert_was_cancelled(self) -> TestPublisher[T]:
        """Assert some subscriber called ``cancel``.

        Example::

            ts.cancel()
            tp.assert_was_cancelled()
        """
        if not self._was_cancelled:
            raise AssertionError("expected a subscriber to cancel, but none did")
        return self

    def assert_not_cancelled(self) -> TestPublisher[T]:
        """Assert no subscriber ever called ``cancel``."""
        if self._was_cancelled:
            raise AssertionError("expected no cancellation, but a subscriber cancelled")
        return self

    def assert_min_requested(self, n: int) -> TestPublisher[T]:
        """Assert every current subscriber has an outstanding demand of at least ``n``.

        Example::

            tp.subscribe(TestSubscriber[int](5))
            tp.assert_min_requested(5)
        """
        demands = self._demands()
        if not demands:
            raise AssertionError(
                f"expected an outstanding demand of at least {n}, but there are no subscribers"
            )
        if min(demands) < n:
            raise AssertionError(
                f"expected every subscriber to have an outstanding demand of at least {n}, "
                f"but the demands are {demands}"
            )
        return self

    def assert_max_requested(self, n: int) -> TestPublisher[T]:
        """Assert no current subscriber has an outstanding demand above ``n``."""
        demands = self._demands()
        if demands and max(demands) > n:
            raise AssertionError(
                f"expected every subscriber to have an outstanding demand of at most {n}, "
                f"but the demands are {demands}"
            )
        return self

    def assert_subscribers(self, n: int | None = None) -> TestPublisher[T]:
        """Assert exactly ``n`` current subscribers (at least one when ``n`` is omitted).

        Example::

            tp.assert_subscribers(2)
        """
        count = self.subscriber_count
        if n is None:
            if count == 0:
                raise AssertionError("expected at least one subscriber, but there are none")
        elif count != n:
            raise AssertionError(f"expected {n} subscriber(s), but there are {count}")
        return self

    def assert_no_subscribers(self) -> TestPublisher[T]:
        """Assert there is no current subscriber (all cancelled, terminated, or none came)."""
        return self.assert_subscribers(0)

    # ------------------------------------------------------------------ internals

    def _demands(self) -> list[int]:
        with self._lock:
            return [s.demand for s in self._subs]

    def _check_not_terminated_locked(self, what: str) -> None:
        if self._terminal is not False and not self._keep_after_terminate:
            kind = "complete()" if self._terminal is None else f"error({self._terminal!r})"
            raise AssertionError(
                violation(
                    "1.7",
                    f"TestPublisher.{what} after {kind}; use "
                    "create_noncompliant(Violation.CLEANUP_ON_TERMINATE) to signal after a terminal signal",
                )
            )

    def _terminate(self, error: BaseException | None) -> TestPublisher[T]:
        with self._lock:
            self._check_not_terminated_locked("complete()" if error is None else "error()")
            if self._terminal is False:
                self._terminal = error
            subs = list(self._subs)
            for s in subs:
                s.terminated = True
                if not self._keep_after_terminate:
                    s.active = False
            if not self._keep_after_terminate:
                self._subs.clear()
        for s in subs:
            if error is None:
                self._signal(s, "on_complete")
            else:
                self._signal(s, "on_error", error)
        return self

    def _on_request(self, sub: _TestSubscription[T], n: int) -> None:
        bad = validate_request(n)
        with self._lock:
            self._request_calls.append(n)
            if sub.terminated or (sub.cancelled and not self._ignore_cancel):
                return  # rule 3.6: no-op after cancel (and after the end, rule 1.6)
            if bad is None:
                sub.demand = add_cap(sub.demand, n)
                return
            # Rule 3.9: the subscription ends with on_error(ValueError).
            sub.terminated = True
            self._drop_locked(sub)
        self._signal(sub, "on_error", bad)

    def _on_cancel(self, sub: _TestSubscription[T]) -> None:
        with self._lock:
            self._was_cancelled = True
            if sub.cancelled:
                return  # rule 3.7
            sub.cancelled = True
            if not self._ignore_cancel:
                self._drop_locked(sub)

    def _drop_locked(self, sub: _TestSubscription[T]) -> None:
        if sub.active:
            sub.active = False
            self._subs.remove(sub)

    def _signal(self, sub: _TestSubscription[T], method: str, *args: Any) -> None:
        try:
            getattr(sub.subscriber, method)(*args)
        except Exception as e:  # noqa: BLE001 - rule 2.13: drop the subscriber, report the error
            with self._lock:
                sub.terminated = True
                self._drop_locked(sub)
            plugins.on_error(e, f"TestPublisher: {sub.subscriber!r}.{method} raised (rule 2.13)")

    def __repr__(self) -> str:
        mode = (
            "compliant"
            if not self._violations
            else "noncompliant " + ",".join(sorted(v.name for v in self._violations))
        )
        return f"<TestPublisher {mode} subscribers={len(self._subs)}>"
