"""TestSubscriber: a recording, asserting, rule-checking Subscriber for tests.

It records every signal it receives, can wait for them (``await_count``, ``await_done``), offers
chainable assertions, and watches the Publisher side of the contract as it goes: every rule
violation it sees is recorded as a message naming the rule (``violations``), never raised from a
signal method (rule 2.13), so a test can end with ``assert_no_violations()``.

Thread safety: all state is guarded by one lock (correct without the GIL). The lock is never held
while calling the Subscription (``request``/``cancel``): a synchronous Publisher calls back into
``on_next`` from inside ``request``, and holding the lock there would deadlock or hide re-entry.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar, Generic, NoReturn, TypeAlias, TypeVar

from .._internal.requests import add_cap, validate_request
from .._spec import MAX_DEMAND, Subscription, null_element_message, violation
from ..errors import NoneElementError

__all__ = ["TestSubscriber", "ErrorMatcher"]

T = TypeVar("T")

#: What ``assert_error`` accepts: an exception type (or tuple of types) checked with ``isinstance``,
#: an exception instance checked by identity, or a predicate called with the error.
ErrorMatcher: TypeAlias = "type[BaseException] | tuple[type[BaseException], ...] | BaseException | Callable[[BaseException], object]"

#: Gives the other threads a chance to run (releases the GIL); see ``TestSubscriber._exit``.
_yield: Callable[[], None] = getattr(os, "sched_yield", None) or (lambda: time.sleep(0))

_YIELD_EVERY = 8  # ... every this many signals (each yield perturbs the timing of the test)

_MAX_SHOWN = 30  # values shown in a failure message before eliding the rest
_MAX_VIOLATIONS_SHOWN = 50  # violations listed in a failure message


def _short(x: object, limit: int = 80) -> str:
    r = repr(x)
    return r if len(r) <= limit else r[: limit - 4] + " ...>"


def _show_list(items: list[Any]) -> str:
    if len(items) <= _MAX_SHOWN:
        return repr(items)
    head = ", ".join(repr(x) for x in items[:_MAX_SHOWN])
    return f"[{head}, ... ({len(items) - _MAX_SHOWN} more)]"


def _is_predicate(x: object) -> bool:
    # A class is callable but is compared by equality (or isinstance for errors), never called.
    return callable(x) and not isinstance(x, type)


class TestSubscriber(Generic[T]):
    """A Subscriber that records signals, waits for them, asserts on them and checks the rules.

    Example::

        ts = TestSubscriber[int]()
        Flowable.range(1, 3).subscribe(ts)
        ts.await_done().assert_result(1, 2, 3).assert_no_violations()

        ts = TestSubscriber[int](initial_request=0)   # no demand yet
        source.subscribe(ts)
        ts.assert_no_values().request(2)
        ts.await_count(2).assert_values(1, 2).cancel()

    ``initial_request`` (default ``2**63 - 1``, unbounded) is requested in ``on_subscribe`` if > 0.
    ``tag`` prefixes every failure message, to tell several subscribers apart.

    What is recorded as a violation (``violations``; nothing is raised except for ``None``):

    - rule 1.9: ``on_next``/``on_error``/``on_complete`` before ``on_subscribe``;
    - rule 2.12: a second ``on_subscribe`` (that Subscription is cancelled, rule 2.5);
    - rule 1.1: ``on_next`` beyond the demand requested so far (the sum of requests, capped at
      ``2**63 - 1`` which means unbounded); also counted after this subscriber's own ``cancel``;
    - rule 1.7: any signal after a terminal signal, including a second terminal signal;
    - rule 1.3: a signal method entered on one thread while another thread is inside one (re-entry
      on the same thread, as a synchronous Publisher does from ``request``, is allowed, and so is a
      signal from another thread while ``on_subscribe`` is making its initial ``request``: RxJava's
      relaxed rule 1.3 for library subscribers, seed 004). Detection is by observation: a race
      that happens to not overlap in time is not seen. To make overlaps observable under the GIL,
      once ``on_next``/``on_error``/``on_complete`` have come from two threads every 8th signal
      yields to the other threads while it still counts as running;
    - rules 3.16/3.15: the Subscription's ``request``/``cancel`` raising inside ``on_subscribe``
      (recorded, not propagated: ``on_subscribe`` returns normally, rule 2.13);
    - rule 2.13: ``on_next(None)``, ``on_error(None)``, ``on_subscribe(None)`` (also raise
      ``TypeError``, as the rule requires) and ``on_error`` with a non-exception.

    Signals that arrive after this subscriber's own ``cancel()`` are not violations by themselves
    (rule 2.8: elements may still be in flight), as long as they stay within the demand requested
    before the cancel (rule 1.1) and follow no terminal signal (rule 1.7). ``on_complete`` and
    ``on_error`` need no demand (rules 2.9, 2.10).
    """

    __test__: ClassVar[bool] = False  # tell pytest this is not a test class
    #: Flowable.subscribe hands raw signals to this subscriber (no strict wrapper), so violations show.
    _rs_no_wrap: ClassVar[bool] = True

    def __init__(self, initial_request: int = MAX_DEMAND, *, tag: str | None = None) -> None:
        if not isinstance(initial_request, int) or isinstance(initial_request, bool) or initial_request < 0:
            raise ValueError(f"initial_request must be an int >= 0, got {initial_request!r}")
        self.tag = tag
        self._initial_request = initial_request
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._waiters = 0
        # Subscription state.
        self._subscription: Subscription | None = None
        self._subscribed = False
        self._cancelled = False
        self._pending_request = 0  # valid requests made before on_subscribe (capped sum)
        self._pending_invalid: list[int] = []  # invalid requests made before on_subscribe, forwarded as is
        # Demand accounting for rule 1.1.
        self._requested_total = 0  # sum of every valid request forwarded, capped at MAX_DEMAND
        self._demand = 0  # outstanding demand; MAX_DEMAND is sticky (unbounded)
        self._received = 0  # on_next calls, all of them (values_and_clear does not reset it)
        # Records.
        self._values: list[T] = []
        self._value_threads: list[str] = []
        self._errors: list[BaseException] = []
        self._completions = 0
        self._terminal_count = 0
        self._terminal_kind: str | None = None
        self._signals: list[tuple[str, str]] = []
        self._last_thread: str | None = None
        self._first_tid: int | None = None  # thread of the first on_next/on_error/on_complete
        self._many_threads = False  # those signals came from more than one thread
        self._yield_tick = 0  # signals since they did
        self._violations: list[str] = []
        # Rule 1.3 tracker: thread ident -> (thread name, stack of signal methods in progress).
        self._active: dict[int, tuple[str, list[str]]] = {}

    # ------------------------------------------------------------------ Subscriber protocol

    def on_subscribe(self, subscription: Subscription) -> None:
        """Store the Subscription and request ``initial_request`` plus any earlier ``request(n)``.

        A ``cancel()`` made before this call cancels ``subscription`` now. A second call records a
        rule 2.12 violation and cancels the second Subscription (rule 2.5).
        """
        if subscription is None:
            self._none_argument("on_subscribe")
        shown = _safe_short(subscription)  # foreign code: not under the lock
        tid = threading.get_ident()
        name = threading.current_thread().name
        with self._lock:
            self._enter_locked("on_subscribe", tid, name)
            self._signals.append(("on_subscribe", name))
            self._last_thread = name
            second = self._subscribed
            amount = 0
            invalid: list[int] = []
            cancelled = self._cancelled
            if second:
                self._violations.append(
                    violation(
                        "2.12",
                        f"on_subscribe called a second time (with {shown}); "
                        "the second Subscription was cancelled (rule 2.5)",
                    )
                )
            else:
                self._subscription = subscription
                self._subscribed = True
                if not cancelled:
                    amount = add_cap(self._initial_request, self._pending_request)
                    invalid = self._pending_invalid
                    self._add_demand_locked(amount)
                self._pending_request = 0
                self._pending_invalid = []
            self._notify_locked()
        # Rule 1.3 as relaxed for library subscribers (seed 004, "FlowableSubscriber"): the request
        # made from on_subscribe may make an asynchronous Publisher signal on another thread before
        # request returns. Everything this method records is recorded by now, so it leaves the
        # rule 1.3 tracker first: a signal from another thread during the call below is legal.
        self._exit(tid)
        if second:
            if subscription is not self._subscription:
                self._call_subscription(subscription, "cancel")
        elif cancelled:
            self._call_subscription(subscription, "cancel")
        else:
            if amount > 0:
                self._call_subscription(subscription, "request", amount)
            for n in invalid:
                self._call_subscription(subscription, "request", n)

    def on_next(self, item: T) -> None:
        """Record ``item`` (and the thread it arrived on); check rules 1.9, 1.7, 1.1 and 1.3."""
        if item is None:
            self._none_argument("on_next")
        tid = threading.get_ident()
        name = threading.current_thread().name
        with self._lock:
            self._enter_locked("on_next", tid, name)
            self._values.append(item)
            self._value_threads.append(name)
            self._signals.append(("on_next", name))
            self._last_thread = name
            switched = self._switched_locked(tid)
            self._received += 1
            rule = ""  # the rule this on_next breaks, if any; the message is built after the lock
            if not self._subscribed:
                rule, head, detail = "1.9", "on_next(", ") before on_subscribe"
            elif self._terminal_kind is not None:
                rule, head, detail = "1.7", "on_next(", f") after {self._terminal_kind}"
            elif self._demand < MAX_DEMAND:
                if self._demand > 0:
                    self._demand -= 1
                else:
                    rule, head = "1.1", f"on_next #{self._received} ("
                    detail = f") beyond the requested demand: only {self._requested_total} requested in total"
            self._notify_locked()
        if rule:
            # repr() of the element is foreign code: never run it under the (non-reentrant) lock
            msg = violation(rule, f"{head}{_safe_short(item)}{detail}")
            with self._lock:
                self._violations.append(msg)
        self._exit(tid, switched)

    def on_error(self, error: BaseException) -> None:
        """Record ``error`` as the terminal signal; check rules 1.9, 1.7, 1.3 and 2.13."""
        if error is None:
            self._none_argument("on_error")
        tid = threading.get_ident()
        name = threading.current_thread().name
        with self._lock:
            self._enter_locked("on_error", tid, name)
        # str()/repr() of the argument is foreign code: never run it under the (non-reentrant) lock.
        shown = _describe_error(error)
        with self._lock:
            self._signals.append(("on_error", name))
            self._last_thread = name
            switched = self._switched_locked(tid)
            if isinstance(error, BaseException):
                self._errors.append(error)
            else:
                self._violations.append(
                    violation(
                        "2.13",
                        f"{shown}: the argument is a {type(error).__name__}, not an exception",
                    )
                )
            self._terminal_locked("on_error", shown)
            self._notify_locked()
        self._exit(tid, switched)

    def on_complete(self) -> None:
        """Record the completion; check rules 1.9, 1.7 and 1.3."""
        tid = threading.get_ident()
        name = threading.current_thread().name
        with self._lock:
            self._enter_locked("on_complete", tid, name)
            self._signals.append(("on_complete", name))
            self._last_thread = name
            switched = self._switched_locked(tid)
            self._completions += 1
            self._terminal_locked("on_complete", "on_complete")
            self._notify_locked()
        self._exit(tid, switched)

    # ------------------------------------------------------------------ Subscription control

    def request(self, n: int) -> TestSubscriber[T]:
        """Request ``n`` more items; before ``on_subscribe`` the amount is added to the initial request.

        Invalid amounts (``0``, ``-1``, ...) are forwarded unchanged, so a test can check that the
        Publisher answers with ``on_error(ValueError)`` (rule 3.9); they add no demand. After
        ``cancel()`` this is a no-op.

        Example::

            ts = TestSubscriber[int](0)
            source.subscribe(ts)
            ts.request(1).await_count(1)
        """
        valid = validate_request(n) is None
        with self._lock:
            if self._cancelled:
                return self
            s = self._subscription
            if s is None:
                if valid:
                    self._pending_request = add_cap(self._pending_request, n)
                else:
                    self._pending_invalid.append(n)
                return self
            if valid:
                self._add_demand_locked(n)
        s.request(n)  # not under the lock: a synchronous Publisher calls on_next from here
        return self

    def cancel(self) -> TestSubscriber[T]:
        """Cancel the Subscription (idempotent); before ``on_subscribe`` it is cancelled on arrival.

        Example::

            ts = TestSubscriber[int]()
            ts.cancel()
            source.subscribe(ts)      # the Subscription is cancelled at once
            ts.assert_cancelled()
        """
        with self._lock:
            if self._cancelled:
                return self
            self._cancelled = True
            s = self._subscription
            self._notify_locked()
        if s is not None:
            s.cancel()
        return self

    @property
    def is_cancelled(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self._cancelled

    @property
    def subscription(self) -> Subscription | None:
        """The Subscription received by the first ``on_subscribe``, or ``None``."""
        return self._subscription

    # ------------------------------------------------------------------ records

    @property
    def subscribed(self) -> bool:
        """True once ``on_subscribe`` was called."""
        return self._subscribed

    @property
    def values(self) -> list[T]:
        """A copy of the values received so far, in order."""
        with self._lock:
            return list(self._values)

    @property
    def value_threads(self) -> list[str]:
        """The name of the thread each value arrived on (parallel to :attr:`values`)."""
        with self._lock:
            return list(self._value_threads)

    @property
    def errors(self) -> list[BaseException]:
        """A copy of the errors received so far (normally zero or one)."""
        with self._lock:
            return list(self._errors)

    @property
    def completions(self) -> int:
        """How many times ``on_complete`` was called (normally zero or one)."""
        return self._completions

    @property
    def signals(self) -> list[tuple[str, str]]:
        """Every signal as ``(method name, thread name)``, in order, e.g. ``("on_next", "MainThread")``."""
        with self._lock:
            return list(self._signals)

    @property
    def last_thread(self) -> str | None:
        """The name of the thread of the latest signal, or ``None`` before any signal."""
        return self._last_thread

    @property
    def is_terminated(self) -> bool:
        """True once ``on_error`` or ``on_complete`` was received."""
        return self._terminal_kind is not None

    @property
    def violations(self) -> list[str]:
        """The rule violations seen so far, each a message ``"Rule X.Y violated: ..."``."""
        with self._lock:
            return list(self._violations)

    def values_and_clear(self) -> list[T]:
        """Return the values received so far and forget them (demand accounting is unaffected).

        Example::

            assert ts.values_and_clear() == [1, 2]
            ts.request(1).await_count(1).assert_values(3)
        """
        with self._lock:
            vals = self._values
            self._values = []
            self._value_threads = []
            return vals

    # ------------------------------------------------------------------ waiting

    def await_count(self, n: int, timeout: float = 5.0) -> TestSubscriber[T]:
        """Block until at least ``n`` values have arrived; fail after ``timeout`` seconds.

        Fails at once if the stream terminates with fewer than ``n`` values.

        Example::

            ts.await_count(3).assert_values(1, 2, 3)
        """
        ok = self._wait(lambda: len(self._values) >= n or self._terminal_kind is not None, timeout)
        if ok and len(self._values) >= n:
            return self
        if ok:
            self._fail(f"await_count({n}): the stream terminated after {len(self._values)} value(s)")
        self._fail(
            f"await_count({n}) timed out after {timeout}s with {len(self._values)} value(s)",
            chain=self._chain_picture(),
        )

    def await_done(self, timeout: float = 5.0) -> TestSubscriber[T]:
        """Block until a terminal signal arrives or :meth:`cancel` is called; fail after ``timeout``.

        On a timeout the Subscription is cancelled before failing (as RxJava's ``awaitDone``), so a
        stream that never ends does not keep running after the failed test.

        Example::

            ts.await_done(1.0).assert_complete()
        """
        if self._wait(lambda: self._terminal_kind is not None or self._cancelled, timeout):
            return self
        chain = self._chain_picture()  # before the cancel below changes it
        self.cancel()
        self._fail(
            f"await_done() timed out after {timeout}s: no terminal signal; the subscription was cancelled",
            chain=chain,
        )

    def _wait(self, done: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            self._waiters += 1
            try:
                while not done():
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return False
                    self._cond.wait(remaining)
                return True
            finally:
                self._waiters -= 1

    # ------------------------------------------------------------------ assertions

    def assert_values(self, *expected: T) -> TestSubscriber[T]:
        """Assert the values received are exactly ``expected``, in order.

        Example::

            ts.assert_values(1, 2, 3)
        """
        actual = self.values
        want = list(expected)
        if actual != want:
            self._fail(
                f"expected values {_show_list(want)} but got {_show_list(actual)}{_diff(want, actual)}"
            )
        return self

    def assert_value(self, expected: T | Callable[[T], object]) -> TestSubscriber[T]:
        """Assert exactly one value arrived, equal to ``expected`` or accepted by it if it is a predicate.

        Example::

            ts.assert_value(42)
            ts.assert_value(lambda v: v > 40)
        """
        actual = self.values
        if len(actual) != 1:
            self._fail(f"expected exactly one value but got {len(actual)}: {_show_list(actual)}")
        self._check_value(0, actual[0], expected)
        return self

    def assert_value_at(self, index: int, expected: T | Callable[[T], object]) -> TestSubscriber[T]:
        """Assert the value at ``index`` equals ``expected`` (or satisfies it, if a predicate).

        Example::

            ts.assert_value_at(0, "a").assert_value_at(-1, lambda s: s.endswith("z"))
        """
        actual = self.values
        if not -len(actual) <= index < len(actual):
            self._fail(f"no value at index {index}: only {len(actual)} value(s): {_show_list(actual)}")
        self._check_value(index, actual[index], expected)
        return self

    def assert_value_count(self, n: int) -> TestSubscriber[T]:
        """Assert exactly ``n`` values arrived.

        Example::

            ts.assert_value_count(3)
        """
        actual = self.values
        if len(actual) != n:
            self._fail(f"expected {n} value(s) but got {len(actual)}: {_show_list(actual)}")
        return self

    def assert_no_values(self) -> TestSubscriber[T]:
        """Assert no value arrived.

        Example::

            TestSubscriber[int](0).assert_no_values()
        """
        actual = self.values
        if actual:
            self._fail(f"expected no values but got {len(actual)}: {_show_list(actual)}")
        return self

    def assert_values_only(self, *expected: T) -> TestSubscriber[T]:
        """Assert the values are exactly ``expected`` and no terminal signal arrived.

        Example::

            ts.assert_values_only(1, 2)   # still running
        """
        return self.assert_subscribed().assert_values(*expected).assert_not_terminated()

    def assert_complete(self) -> TestSubscriber[T]:
        """Assert ``on_complete`` arrived exactly once.

        Example::

            ts.await_done().assert_complete()
        """
        c = self._completions
        if c == 0:
            self._fail("expected on_complete but it did not arrive")
        if c > 1:
            self._fail(f"expected on_complete once but it arrived {c} times (rule 1.7)")
        return self

    def assert_not_complete(self) -> TestSubscriber[T]:
        """Assert ``on_complete`` never arrived.

        Example::

            ts.assert_not_complete()
        """
        c = self._completions
        if c:
            self._fail(f"expected no on_complete but it arrived {c} time(s)")
        return self

    def assert_error(
        self, expected: ErrorMatcher = BaseException, match: str | None = None
    ) -> TestSubscriber[T]:
        """Assert exactly one error arrived and it matches ``expected`` and ``match``.

        ``expected`` is an exception type or tuple of types (``isinstance``), an exception instance
        (identity) or a predicate. ``match`` is a regular expression searched in ``str(error)``.

        Example::

            ts.assert_error(ValueError, match="rule 3.9")
            ts.assert_error(lambda e: e.args == ("boom",))
        """
        if not (isinstance(expected, type | tuple | BaseException) or callable(expected)):
            raise TypeError(
                "assert_error() expects an exception type, a tuple of types, an exception instance "
                f"or a predicate, got {expected!r}"
            )
        errs = self.errors
        if len(errs) != 1:
            what = "no error" if not errs else f"{len(errs)} errors: {errs!r}"
            self._fail(f"expected exactly one error matching {_describe_matcher(expected)} but got {what}")
        err = errs[0]
        if isinstance(expected, type | tuple):
            if not isinstance(err, expected):
                self._fail(f"expected an error of type {_describe_matcher(expected)} but got {err!r}")
        elif isinstance(expected, BaseException):
            if err is not expected:
                self._fail(f"expected the error {expected!r} (same object) but got {err!r}")
        elif not expected(err):
            self._fail(f"the error {err!r} does not satisfy the predicate {_describe_matcher(expected)}")
        if match is not None and re.search(match, str(err)) is None:
            self._fail(f"the error message {str(err)!r} does not match {match!r} ({type(err).__name__})")
        return self

    def assert_no_errors(self) -> TestSubscriber[T]:
        """Assert no error arrived.

        Example::

            ts.assert_no_errors()
        """
        errs = self.errors
        if errs:
            self._fail(f"expected no errors but got {len(errs)}: {errs!r}", cause=errs[0])
        return self

    def assert_subscribed(self) -> TestSubscriber[T]:
        """Assert ``on_subscribe`` was called.

        Example::

            source.subscribe(ts)
            ts.assert_subscribed()
        """
        if not self._subscribed:
            self._fail("expected on_subscribe but it was not called")
        return self

    def assert_not_subscribed(self) -> TestSubscriber[T]:
        """Assert no signal at all arrived (not even ``on_subscribe``).

        Example::

            TestSubscriber[int]().assert_not_subscribed()
        """
        sig = self.signals
        if sig:
            self._fail(
                f"expected no on_subscribe and no signal but got {len(sig)} signal(s), first {sig[0][0]}"
            )
        return self

    def assert_terminated(self) -> TestSubscriber[T]:
        """Assert exactly one terminal signal (``on_error`` or ``on_complete``) arrived.

        Example::

            ts.await_done().assert_terminated()
        """
        t = self._terminal_count
        if t == 0:
            self._fail("expected a terminal signal (on_error or on_complete) but none arrived")
        if t > 1:
            self._fail(f"expected one terminal signal but got {t} (rule 1.7)")
        return self

    def assert_not_terminated(self) -> TestSubscriber[T]:
        """Assert neither ``on_error`` nor ``on_complete`` arrived.

        Example::

            ts.assert_not_terminated()
        """
        if self._terminal_count:
            self._fail(f"expected no terminal signal but got {self._terminal_kind}")
        return self

    def assert_result(self, *expected: T) -> TestSubscriber[T]:
        """Assert subscribed, exactly the values ``expected``, no error, and one completion.

        Example::

            ts.await_done().assert_result(1, 2, 3)
        """
        return self.assert_subscribed().assert_values(*expected).assert_no_errors().assert_complete()

    def assert_failure(
        self, expected: ErrorMatcher, *values: T, match: str | None = None
    ) -> TestSubscriber[T]:
        """Assert subscribed, exactly ``values``, one error matching ``expected``, and no completion.

        Example::

            ts.await_done().assert_failure(ZeroDivisionError, 1, 2)
        """
        self.assert_subscribed().assert_values(*values).assert_error(expected, match)
        return self.assert_not_complete()

    def assert_empty(self) -> TestSubscriber[T]:
        """Assert subscribed, and no value, error or completion arrived.

        Example::

            Flowable.never().subscribe(ts)
            ts.assert_empty()
        """
        return self.assert_subscribed().assert_no_values().assert_no_errors().assert_not_terminated()

    def assert_cancelled(self) -> TestSubscriber[T]:
        """Assert :meth:`cancel` was called.

        Example::

            ts.cancel().assert_cancelled()
        """
        if not self._cancelled:
            self._fail("expected the subscriber to be cancelled but cancel() was not called")
        return self

    def assert_not_cancelled(self) -> TestSubscriber[T]:
        """Assert :meth:`cancel` was not called.

        Example::

            ts.assert_not_cancelled()
        """
        if self._cancelled:
            self._fail("expected the subscriber not to be cancelled but cancel() was called")
        return self

    def assert_no_violations(self) -> TestSubscriber[T]:
        """Assert no Reactive Streams rule violation was seen; the failure lists all of them.

        Example::

            Flowable.range(0, 10).map(str).subscribe(ts)
            ts.await_done().assert_no_violations()
        """
        v = self.violations
        if v:
            self._fail(
                f"{len(v)} Reactive Streams rule violation(s):\n{_list_violations(v)}", show_violations=False
            )
        return self

    # ------------------------------------------------------------------ internals

    def _check_value(self, index: int, actual: T, expected: T | Callable[[T], object]) -> None:
        if _is_predicate(expected):
            pred: Callable[[T], object] = expected  # type: ignore[assignment]
            if not pred(actual):
                self._fail(f"the value at index {index}, {actual!r}, does not satisfy the predicate {pred!r}")
        elif actual != expected:
            self._fail(f"expected {expected!r} at index {index} but got {actual!r}")

    def _add_demand_locked(self, n: int) -> None:
        self._requested_total = add_cap(self._requested_total, n)
        if self._demand < MAX_DEMAND:
            self._demand = add_cap(self._demand, n)

    def _terminal_locked(self, kind: str, shown: str) -> None:
        self._terminal_count += 1
        if not self._subscribed:
            self._violations.append(violation("1.9", f"{shown} before on_subscribe"))
        elif self._terminal_kind is not None:
            self._violations.append(
                violation("1.7", f"{shown} after {self._terminal_kind}: a second terminal signal")
            )
        if self._terminal_kind is None:
            self._terminal_kind = kind

    def _enter_locked(self, kind: str, tid: int, name: str) -> None:
        # Rule 1.3: signals must not overlap. Re-entry on the same thread (a synchronous Publisher
        # calling on_next from inside request, called from on_subscribe/on_next) is serial, so it
        # is allowed; another thread being inside a signal method at this moment is an overlap.
        active = self._active
        others = [f"{stack[-1]} on thread {tname!r}" for t, (tname, stack) in active.items() if t != tid]
        if others:
            self._violations.append(
                violation("1.3", f"{kind} entered on thread {name!r} while {', '.join(others)} was running")
            )
        entry = active.get(tid)
        if entry is None:
            active[tid] = (name, [kind])
        else:
            entry[1].append(kind)

    def _switched_locked(self, tid: int) -> bool:
        # True once on_next/on_error/on_complete have come from more than one thread.
        first = self._first_tid
        if first is None:
            self._first_tid = tid
        elif first != tid:
            self._many_threads = True
        if not self._many_threads:
            return False
        self._yield_tick += 1
        return self._yield_tick % _YIELD_EVERY == 0

    def _exit(self, tid: int, many_threads: bool = False) -> None:
        if many_threads:
            # Rule 1.3 detection. With the GIL, a second thread that signals without
            # serialization mostly runs while the first one is outside this subscriber (threads
            # switch every few ms, rarely inside the short window below), so the overlap would go
            # unseen. Once signals have come from two threads, every _YIELD_EVERY-th signal lets
            # the other threads run while it still counts as inside a signal method: an
            # unserialized emitter then enters now and is flagged. A stream signalled from one
            # thread (with on_subscribe possibly on another) pays nothing. Not every signal: each
            # yield slows the consumer down, which changes the timing of the code under test.
            _yield()
        with self._lock:
            entry = self._active.get(tid)
            if entry is not None:
                entry[1].pop()
                if not entry[1]:
                    del self._active[tid]

    def _call_subscription(self, subscription: Subscription, method: str, *args: int) -> None:
        # Rules 3.15/3.16: request and cancel must return normally. One that raises inside
        # on_subscribe is recorded here; it must not escape on_subscribe (rule 2.13).
        try:
            getattr(subscription, method)(*args)
        except Exception as e:  # noqa: BLE001 - recorded as a violation of the Publisher
            rule = "3.16" if method == "request" else "3.15"
            call = f"{method}({args[0]})" if args else f"{method}()"
            msg = violation(rule, f"Subscription.{call} raised {_describe_exception(e)} inside on_subscribe")
            with self._lock:
                self._violations.append(msg)
                self._notify_locked()

    def _notify_locked(self) -> None:
        if self._waiters:
            self._cond.notify_all()

    def _none_argument(self, where: str) -> NoReturn:
        with self._lock:
            self._violations.append(
                violation("2.13", f"{where}(None) was called; None is not a valid element or argument")
            )
        raise NoneElementError(null_element_message(where))

    def _describe(self, show_violations: bool = True) -> str:
        with self._lock:
            parts = [
                f"values={_show_list(self._values)} ({len(self._values)})",
                f"errors={self._errors!r}",
                f"completions={self._completions}",
                f"subscribed={self._subscribed}",
                f"cancelled={self._cancelled}",
            ]
            viol = list(self._violations)
        text = "state: " + ", ".join(parts)
        if show_violations and viol:
            text += "\nviolations:\n" + _list_violations(viol)
        return text

    def _fail(
        self,
        message: str,
        *,
        cause: BaseException | None = None,
        show_violations: bool = True,
        chain: str | None = None,
    ) -> NoReturn:
        prefix = f"[{self.tag}] " if self.tag else ""
        if chain is None:
            chain = self._chain_picture()
        picture = f"\nchain (rstreams.debug.describe):\n{chain}" if chain else ""
        raise AssertionError(f"{prefix}{message}\n{self._describe(show_violations)}{picture}") from cause

    def _chain_picture(self) -> str:
        """``rstreams.debug.describe`` of the running chain, or '' once it ended (or never began)."""
        if self._subscription is None or self._terminal_kind is not None or self._cancelled:
            return ""
        try:
            from ..debug import describe

            return describe(self)
        except Exception:  # noqa: BLE001 - a picture must never hide the assertion itself
            return ""

    def __repr__(self) -> str:
        tag = f" {self.tag!r}" if self.tag else ""
        return (
            f"<TestSubscriber{tag} values={len(self._values)} errors={len(self._errors)} "
            f"completions={self._completions} cancelled={self._cancelled} violations={len(self._violations)}>"
        )


def _diff(want: list[Any], actual: list[Any]) -> str:
    for i, (a, b) in enumerate(zip(want, actual, strict=False)):
        if a != b:
            return f" (first difference at index {i}: expected {a!r}, got {b!r})"
    if len(want) > len(actual):
        return f" (missing from index {len(actual)}: {_show_list(want[len(actual) :])})"
    return f" (unexpected extra values from index {len(want)}: {_show_list(actual[len(want) :])})"


def _list_violations(v: list[str]) -> str:
    lines = [f"  - {m}" for m in v[:_MAX_VIOLATIONS_SHOWN]]
    if len(v) > _MAX_VIOLATIONS_SHOWN:
        lines.append(f"  ... and {len(v) - _MAX_VIOLATIONS_SHOWN} more (see .violations)")
    return "\n".join(lines)


def _safe_short(x: object) -> str:
    """``_short(x)`` that never raises (a broken ``__repr__`` must not break the recording)."""
    try:
        return _short(x)
    except Exception:  # noqa: BLE001
        return f"<{type(x).__name__} object whose repr() raised>"


def _describe_exception(error: object) -> str:
    """``"TypeName: 'message'"`` for an exception, ``repr`` otherwise; never raises."""
    try:
        if isinstance(error, BaseException):
            return f"{type(error).__name__}: {_short(str(error), 60)}"
        return _short(error)
    except Exception:  # noqa: BLE001 - a broken __str__/__repr__ must not break the recording
        return f"<{type(error).__name__} object whose str() raised>"


def _describe_error(error: object) -> str:
    """How an ``on_error`` argument is shown in a violation message; never raises."""
    return f"on_error({_describe_exception(error)})"


def _describe_matcher(m: object) -> str:
    if isinstance(m, type):
        return m.__name__
    if isinstance(m, tuple):
        return "(" + ", ".join(t.__name__ if isinstance(t, type) else repr(t) for t in m) + ")"
    return repr(m)
