"""The kit's test environment: timeouts, the violation channel and the test-side actors.

Two channels are kept apart:

* **violations** (:meth:`TestEnvironment.flop`): a rule broken by the implementation under test,
  noticed on any thread (callbacks never raise into the implementation, they record);
* **expected signals** (the :class:`Receptacle` of each test-side subscriber or probe): elements,
  completion and *expected* errors such as the rule 3.9 ``ValueError``.

A fresh environment is created for every test, so tests are isolated and run under pytest-xdist.
Every wait has a deadline; every thread the kit starts is a daemon thread joined at :meth:`close`.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final, Generic, NoReturn, Protocol, TypeVar

from .._spec import Subscriber, Subscription, violation
from ._outcomes import TckFailure, fail

__all__ = [
    "TestEnvironment",
    "Latch",
    "Promise",
    "Receptacle",
    "ReceiveBufferOverflow",
    "ConcurrencyDetector",
    "ManualSubscriber",
    "TckSubscription",
    "ManualPublisher",
    "WhiteboxSubscriberProbe",
    "SubscriberPuppet",
    "settings_from_env",
    "END",
    "RECEIVE_BUFFER_SIZE",
]

T = TypeVar("T")

#: Default timeouts (milliseconds): generous enough for CPython on a 2-core CI machine.
DEFAULT_TIMEOUT_MS: Final = 200
DEFAULT_NO_SIGNALS_TIMEOUT_MS: Final = 100
DEFAULT_POLL_TIMEOUT_MS: Final = 10
DEFAULT_GC_TIMEOUT_MS: Final = 300

#: Like the JVM kit (2 x 16): a test-side subscriber holds at most this many unconsumed signals; one
#: more means the Publisher emitted more than it was asked for (rule 1.1).
RECEIVE_BUFFER_SIZE: Final = 32

_ENV_NAMES: Final[dict[str, tuple[str, ...]]] = {
    "timeout": ("RSTREAMS_TCK_TIMEOUT_MS", "DEFAULT_TIMEOUT_MILLIS"),
    "no_signals": ("RSTREAMS_TCK_NO_SIGNALS_TIMEOUT_MS", "DEFAULT_NO_SIGNALS_TIMEOUT_MILLIS"),
    "poll": (
        "RSTREAMS_TCK_POLL_TIMEOUT_MS",
        "DEFAULT_POLL_TIMEOUT_MILLIS",
        "DEFAULT_POLL_TIMEOUT_MILLIS_ENV",
    ),
    "gc": ("RSTREAMS_TCK_GC_TIMEOUT_MS", "PUBLISHER_REFERENCE_GC_TIMEOUT_MILLIS"),
    "optional": ("RSTREAMS_TCK_OPTIONAL_TIMEOUT_MS",),
}
_DEFAULTS: Final[dict[str, int]] = {
    "timeout": DEFAULT_TIMEOUT_MS,
    "no_signals": DEFAULT_NO_SIGNALS_TIMEOUT_MS,
    "poll": DEFAULT_POLL_TIMEOUT_MS,
    "gc": DEFAULT_GC_TIMEOUT_MS,
}


def settings_from_env(key: str) -> int | None:
    """The value in milliseconds of the first set environment variable for ``key``, else ``None``.

    ``key`` is ``"timeout"``, ``"no_signals"``, ``"poll"``, ``"gc"`` or ``"optional"``; both the ``RSTREAMS_TCK_*``
    names and the JVM kit's names are accepted (``DEFAULT_TIMEOUT_MILLIS`` ...).
    """
    for name in _ENV_NAMES[key]:
        raw = os.environ.get(name)
        if raw:
            try:
                value = int(float(raw))
            except ValueError:
                raise ValueError(f"environment variable {name}={raw!r} is not a number of milliseconds") from None
            if value < 0:
                raise ValueError(f"environment variable {name}={raw!r} must not be negative")
            return value
    return None


def _resolve(key: str, explicit: int | None) -> int:
    if explicit is not None:
        return explicit
    from_env = settings_from_env(key)
    if from_env is not None:
        return from_env
    return _DEFAULTS[key]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


class TestEnvironment:
    """Timeouts, the violation channel and cleanup for one kit test.

    ``timeout_ms``: how long to wait for an expected signal; ``no_signals_timeout_ms``: how long to
    wait to conclude that *no* signal arrives; ``poll_timeout_ms``: the poll step; ``gc_timeout_ms``:
    how long rule 3.13 waits for a reference to be dropped; ``optional_timeout_ms``: the expected-signal
    timeout inside an OPTIONAL test (one whose failure is only an ``xfail``), the same as ``timeout_ms``
    unless set. ``None`` means: the environment variable (``RSTREAMS_TCK_TIMEOUT_MS`` or the JVM's
    ``DEFAULT_TIMEOUT_MILLIS``, ..., ``RSTREAMS_TCK_OPTIONAL_TIMEOUT_MS``) or the default.

    Example::

        env = TestEnvironment(timeout_ms=500)
        env.flop("rule 1.3: overlapping signals")    # records a violation, does not raise
        env.drop_violation()                         # 'rule 1.3: overlapping signals'
        env.close()
    """

    __test__ = False  # not a pytest test class, even though its name starts with "Test"

    def __init__(
        self,
        timeout_ms: int | None = None,
        no_signals_timeout_ms: int | None = None,
        poll_timeout_ms: int | None = None,
        gc_timeout_ms: int | None = None,
        optional_timeout_ms: int | None = None,
    ) -> None:
        self.timeout_ms = _resolve("timeout", timeout_ms)
        self.no_signals_timeout_ms = _resolve("no_signals", no_signals_timeout_ms)
        self.poll_timeout_ms = max(1, _resolve("poll", poll_timeout_ms))
        self.gc_timeout_ms = _resolve("gc", gc_timeout_ms)
        optional = optional_timeout_ms if optional_timeout_ms is not None else settings_from_env("optional")
        self.optional_timeout_ms = self.timeout_ms if optional is None else optional
        self._lock = threading.Lock()
        self._violations: list[str] = []
        self._cleanups: list[Callable[[], None]] = []
        self._threads: list[threading.Thread] = []
        self._tls = threading.local()
        self.observations: list[str] = []

    # -- timeouts (seconds) -------------------------------------------------------------------------
    @property
    def timeout(self) -> float:
        return self.timeout_ms / 1000.0

    @property
    def no_signals_timeout(self) -> float:
        return self.no_signals_timeout_ms / 1000.0

    @property
    def poll_timeout(self) -> float:
        return self.poll_timeout_ms / 1000.0

    @property
    def gc_timeout(self) -> float:
        return self.gc_timeout_ms / 1000.0

    # -- the violation channel ----------------------------------------------------------------------
    def flop(self, message: str) -> None:
        """Record a violation found on any thread; never raises (callbacks must return normally)."""
        with self._lock:
            self._violations.append(message)

    def flop_and_fail(self, message: str) -> NoReturn:
        """Record a violation and fail the test now."""
        self.flop(message)
        fail(message)

    @property
    def violations(self) -> list[str]:
        """A snapshot of the violations recorded so far."""
        with self._lock:
            return list(self._violations)

    def drop_violation(self) -> str | None:
        """Remove and return the oldest violation (or ``None``)."""
        with self._lock:
            return self._violations.pop(0) if self._violations else None

    def verify_no_violations(self, delay: bool = True) -> None:
        """Fail with the first recorded violation; wait the no-signal timeout first if ``delay``."""
        if delay:
            time.sleep(self.no_signals_timeout)
        found = self.violations
        if found:
            more = f" (and {len(found) - 1} more: {found[1:3]})" if len(found) > 1 else ""
            fail(found[0] + more)

    def observe(self, note: str) -> None:
        """Record an observation (MAY rules): shown by the CLI table, printed under pytest."""
        self.observations.append(note)
        print(f"[rstreams.tck] observed: {note}")

    # -- threads and cleanup ------------------------------------------------------------------------
    def add_cleanup(self, fn: Callable[[], None]) -> None:
        self._cleanups.append(fn)

    def start_thread(self, target: Callable[[], None], name: str = "rstreams-tck") -> threading.Thread:
        """Start a daemon thread that :meth:`close` joins (with a timeout)."""
        t = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(t)
        t.start()
        return t

    def close(self) -> None:
        """Run the cleanups (reverse order) and join the kit's threads; never raises, never hangs."""
        while self._cleanups:
            fn = self._cleanups.pop()
            try:
                fn()
            except Exception:  # noqa: BLE001 - cleanup is best effort
                pass
        deadline = time.monotonic() + max(self.timeout, 0.5)
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        self._threads.clear()

    # -- rule 2.3: "inside on_complete/on_error of this subscriber" --------------------------------
    @contextmanager
    def inside_terminal_signal(self, subscription: object, method: str) -> Iterator[None]:
        """Mark the current thread as inside ``method`` (on_complete/on_error) for ``subscription``."""
        stack: list[tuple[object, str]] | None = getattr(self._tls, "terminal", None)
        if stack is None:
            stack = []
            self._tls.terminal = stack
        stack.append((subscription, method))
        try:
            yield
        finally:
            stack.pop()

    def terminal_signal_in_progress(self, subscription: object) -> str | None:
        """The name of the terminal method running on this thread for ``subscription``, if any."""
        stack: list[tuple[object, str]] | None = getattr(self._tls, "terminal", None)
        if stack:
            for sub, method in reversed(stack):
                if sub is subscription:
                    return method
        return None


class Latch:
    """A one-shot flag with timeouts (the JVM kit's Latch)."""

    def __init__(self, env: TestEnvironment) -> None:
        self._env = env
        self._event = threading.Event()

    def close(self) -> None:
        self._event.set()

    @property
    def is_closed(self) -> bool:
        return self._event.is_set()

    def expect_close(self, message: str, timeout: float | None = None) -> None:
        t = self._env.timeout if timeout is None else timeout
        if not self._event.wait(t):
            fail(f"{message} (waited {_ms(t)})")

    def assert_open(self, message: str) -> None:
        if self._event.is_set():
            fail(message)


class Promise(Generic[T]):
    """A value set once; waiting for it has a timeout. A second completion is a violation."""

    def __init__(self, env: TestEnvironment, second_completion_message: str = "") -> None:
        self._env = env
        self._event = threading.Event()
        self._value: T | None = None
        self._lock = threading.Lock()
        self._second = second_completion_message

    def complete(self, value: T) -> bool:
        with self._lock:
            if self._event.is_set():
                if self._second:
                    self._env.flop(self._second)
                return False
            self._value = value
            self._event.set()
            return True

    @property
    def is_completed(self) -> bool:
        return self._event.is_set()

    def peek(self) -> T | None:
        return self._value

    def value(self, message: str, timeout: float | None = None) -> T:
        t = self._env.timeout if timeout is None else timeout
        if not self._event.wait(t):
            fail(f"{message} (waited {_ms(t)})")
        value = self._value
        assert value is not None
        return value

    def clear_value(self) -> None:
        """Drop the stored value (keep the completed flag); used to release references (rule 3.13)."""
        self._value = None


class _End:
    __slots__ = ()

    def __repr__(self) -> str:
        return "END"


#: Returned by :meth:`ManualSubscriber.request_next_element_or_end_of_stream` at completion.
END: Final = _End()

_Signal = tuple[str, Any]


class ReceiveBufferOverflow(TckFailure):
    """Raised from a kit subscriber's ``on_next`` when its receive buffer overflows (rule 1.1).

    Like the JVM kit's ``SubscriberBufferOverflowException``: raising is the only way to stop a
    synchronous Publisher that ignores demand (``request(2**63 - 1)`` would otherwise loop for ever
    on the test's thread). The violation is recorded first, so the test fails naming rule 1.1
    whatever the Publisher does with the exception.
    """


class Receptacle:
    """A bounded buffer of received signals: ``("next", x)``, ``("complete", None)``, ``("error", e)``.

    Holding more than ``capacity`` unconsumed signals records a rule 1.1 violation: the Publisher
    emitted more than was requested (the test consumes what it asked for). With ``raise_on_overflow``
    every signal beyond the capacity also raises :class:`ReceiveBufferOverflow` to the caller (the
    Publisher's signalling code).
    """

    def __init__(
        self, env: TestEnvironment, capacity: int = RECEIVE_BUFFER_SIZE, *, raise_on_overflow: bool = False
    ) -> None:
        self._env = env
        self._capacity = capacity
        self._raise = raise_on_overflow
        self._items: deque[_Signal] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._overflowed = False
        self.total_next = 0

    @property
    def overflowed(self) -> bool:
        return self._overflowed

    def add(self, signal: _Signal) -> None:
        message = violation(
            "1.1",
            f"the test subscriber's receive buffer ({self._capacity} signals) overflowed: "
            "the Publisher probably emitted more elements than were requested",
        )
        with self._cond:
            if signal[0] == "next":
                self.total_next += 1
            if len(self._items) < self._capacity:
                self._items.append(signal)
                self._cond.notify_all()
                return
            first = not self._overflowed
            self._overflowed = True
        if first:
            self._env.flop(message)
        if self._raise and signal[0] == "next":
            raise ReceiveBufferOverflow(message)

    def poll(self, timeout: float) -> _Signal | None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._items:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(remaining)
            return self._items.popleft()

    def peek_all(self) -> list[_Signal]:
        with self._cond:
            return list(self._items)

    def clear(self) -> None:
        with self._cond:
            self._items.clear()

    # -- expectations -------------------------------------------------------------------------------
    def next_element(self, message: str, timeout: float) -> Any:
        sig = self.poll(timeout)
        if sig is None:
            fail(f"{message}: no on_next within {_ms(timeout)}")
        if sig[0] != "next":
            fail(f"{message}: expected on_next but got {_describe(sig)}")
        return sig[1]

    def expect_completion(self, message: str, timeout: float) -> None:
        sig = self.poll(timeout)
        if sig is None:
            fail(f"{message}: no on_complete within {_ms(timeout)}")
        if sig[0] != "complete":
            fail(f"{message}: expected on_complete but got {_describe(sig)}")

    def expect_error(
        self, types: tuple[type[BaseException], ...], message: str, timeout: float
    ) -> BaseException:
        sig = self.poll(timeout)
        if sig is None:
            fail(f"{message}: no on_error within {_ms(timeout)}")
        if sig[0] != "error":
            fail(f"{message}: expected on_error({'/'.join(t.__name__ for t in types)}) but got {_describe(sig)}")
        err = sig[1]
        if not isinstance(err, types):
            fail(
                f"{message}: expected on_error({'/'.join(t.__name__ for t in types)}) "
                f"but got on_error({type(err).__name__}: {err})"
            )
        assert isinstance(err, BaseException)
        return err

    def expect_none(self, message: str, timeout: float) -> None:
        sig = self.poll(timeout)
        if sig is not None:
            fail(f"{message}: unexpected {_describe(sig)}")


def _describe(sig: _Signal) -> str:
    kind, value = sig
    if kind == "next":
        return f"on_next({value!r})"
    if kind == "error":
        return f"on_error({type(value).__name__}: {value})"
    return "on_complete()"


class ConcurrencyDetector:
    """Flags a second thread entering while another thread is inside (same-thread re-entry is fine).

    Used for rule 1.3 (signals to one Subscriber) and rule 2.7 (request/cancel on one Subscription).
    """

    def __init__(self, env: TestEnvironment, rule: str, what: str) -> None:
        self._env = env
        self._rule = rule
        self._what = what
        self._lock = threading.Lock()
        self._owner: int | None = None
        self._depth = 0
        self._current = ""
        self.tripped = False

    def enter(self, method: str) -> bool:
        me = threading.get_ident()
        with self._lock:
            if self._owner is None or self._owner == me:
                if self._owner is None:
                    self._current = method
                self._owner = me
                self._depth += 1
                return True
            other, current = self._owner, self._current
            self.tripped = True
        self._env.flop(
            violation(
                self._rule,
                f"{method} was called on thread {threading.current_thread().name} ({me}) while thread "
                f"{other} was still inside {current}: {self._what} must be serial, never concurrent",
            )
        )
        return False

    def exit(self, owned: bool) -> None:
        if not owned:
            return
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                self._owner = None
                self._current = ""

    @contextmanager
    def guard(self, method: str) -> Iterator[None]:
        owned = self.enter(method)
        try:
            yield
        finally:
            self.exit(owned)


def _cancel_left_open(ref: weakref.ref[ManualSubscriber[Any]]) -> None:
    """A test's end: cancel what the subscriber behind ``ref`` (if still alive) left open: its
    Subscription unless it cancelled it or the stream ended, and every further one (rule 1.10's
    second subscribe)."""
    sub = ref()
    if sub is None:
        return
    open_ = list(sub._more_subscriptions)
    sub._more_subscriptions.clear()
    if sub._subscription.is_completed and not sub._cancelled and sub._terminated is None:
        first = sub._subscription.peek()
        if first is not None:
            open_.insert(0, first)
    for s in open_:
        try:
            s.cancel()
        except Exception:  # noqa: BLE001 - a test's end; rule 3.15 is tested where it is the subject
            pass


class ManualSubscriber(Generic[T]):
    """The kit's Subscriber for Publisher tests: records signals and checks the Publisher's side.

    Detectors: on_subscribe first and once (1.9/2.12), no signal after a terminal one (1.7), no
    ``None`` element (2.13), signals never concurrent (1.3), per-thread on_next depth (3.3).
    ``on_next_hook``/``on_subscribe_hook`` run inside the signal (for requests from within on_next).
    """

    def __init__(
        self,
        env: TestEnvironment,
        *,
        on_subscribe_hook: Callable[[ManualSubscriber[T], Subscription], None] | None = None,
        on_next_hook: Callable[[ManualSubscriber[T], T], None] | None = None,
        record: bool = True,
        allow_second_on_subscribe: bool = False,
        name: str = "test subscriber",
    ) -> None:
        self.env = env
        self.name = name
        self._subscription: Promise[Subscription] = Promise(env)
        self._received = Receptacle(env, raise_on_overflow=True)
        self._on_subscribe_hook = on_subscribe_hook
        self._on_next_hook = on_next_hook
        self._record = record
        self._allow_second = allow_second_on_subscribe
        self._terminated: str | None = None
        self._cancelled = False
        self._detector = ConcurrencyDetector(env, "1.3", "signals to one Subscriber")
        self._depth = threading.local()
        self.max_depth = 0
        self.on_subscribe_count = 0
        self.on_next_count = 0
        self.errors: list[BaseException] = []
        # the Subscriptions of further on_subscribe signals (the rule 1.10 tests subscribe it twice)
        self._more_subscriptions: list[Subscription] = []
        # at the end of the test, a stream it left open is cancelled (an endless or timed Publisher
        # would otherwise go on signalling into the process running the kit); a weak reference, so
        # that the cleanup keeps nothing alive (rule 3.13 checks that this subscriber can go)
        env.add_cleanup(functools.partial(_cancel_left_open, weakref.ref(self)))

    # -- Subscriber ---------------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        with self._detector.guard("on_subscribe"):
            self.on_subscribe_count += 1
            if subscription is None:
                self.env.flop(violation("1.9", "the Publisher called on_subscribe(None)"))
                return
            if self.on_subscribe_count > 1 and not self._allow_second:
                self.env.flop(
                    violation("2.12", f"on_subscribe was signalled {self.on_subscribe_count} times to the same Subscriber")
                )
                return
            if not self._subscription.is_completed:
                self._subscription.complete(subscription)
            else:
                self._more_subscriptions.append(subscription)
            if self._on_subscribe_hook is not None:
                self._on_subscribe_hook(self, subscription)

    def on_next(self, item: T) -> None:
        with self._detector.guard("on_next"):
            depth = getattr(self._depth, "value", 0) + 1
            self._depth.value = depth
            try:
                if depth > self.max_depth:
                    self.max_depth = depth
                self.on_next_count += 1
                if not self._subscription.is_completed:
                    self.env.flop(violation("1.9", f"on_next({item!r}) was signalled before on_subscribe"))
                if self._terminated is not None:
                    self.env.flop(violation("1.7", f"on_next({item!r}) was signalled after {self._terminated}"))
                if item is None:
                    self.env.flop(violation("2.13", "the Publisher signalled on_next(None)"))
                if self._record:
                    self._received.add(("next", item))
                if self._on_next_hook is not None:
                    self._on_next_hook(self, item)
            finally:
                self._depth.value = depth - 1

    def on_error(self, error: BaseException) -> None:
        with self._detector.guard("on_error"):
            self.errors.append(error)
            if not self._subscription.is_completed:
                self.env.flop(violation("1.9", f"on_error({error!r}) was signalled before on_subscribe"))
            if self._terminated is not None:
                self.env.flop(violation("1.7", f"on_error({error!r}) was signalled after {self._terminated}"))
            if error is None:
                self.env.flop(violation("2.13", "the Publisher signalled on_error(None)"))
            self._terminated = f"on_error({type(error).__name__})"
            self._received.add(("error", error))

    def on_complete(self) -> None:
        with self._detector.guard("on_complete"):
            if not self._subscription.is_completed:
                self.env.flop(violation("1.9", "on_complete was signalled before on_subscribe"))
            if self._terminated is not None:
                self.env.flop(violation("1.7", f"on_complete was signalled after {self._terminated}"))
            self._terminated = "on_complete"
            self._received.add(("complete", None))

    # -- the test's side ----------------------------------------------------------------------------
    @property
    def terminated(self) -> str | None:
        return self._terminated

    @property
    def received(self) -> Receptacle:
        return self._received

    def subscription(self) -> Subscription:
        return self._subscription.value(violation("1.9", f"on_subscribe was not signalled to the {self.name}"))

    @property
    def has_subscription(self) -> bool:
        return self._subscription.is_completed

    def request(self, n: Any) -> None:
        s = self.subscription()
        try:
            s.request(n)
        except ReceiveBufferOverflow as exc:  # a synchronous Publisher ignoring demand (rule 1.1)
            fail(str(exc))
        except Exception as exc:  # noqa: BLE001 - reported as a violation
            fail(violation("3.16", f"Subscription.request({n!r}) raised {type(exc).__name__}: {exc}"))

    def cancel(self) -> None:
        s = self.subscription()
        self._cancelled = True
        try:
            s.cancel()
        except ReceiveBufferOverflow as exc:
            fail(str(exc))
        except Exception as exc:  # noqa: BLE001
            fail(violation("3.15", f"Subscription.cancel() raised {type(exc).__name__}: {exc}"))

    def release_subscription(self) -> None:
        """Forget the Subscription object (rule 3.13 checks that the Publisher forgot us too)."""
        self._subscription.clear_value()
        self._more_subscriptions.clear()

    def next_element(self, message: str = "", timeout: float | None = None) -> T:
        t = self.env.timeout if timeout is None else timeout
        value: T = self._received.next_element(message or violation("1.1", "expected an element"), t)
        return value

    def next_elements(self, n: int, message: str = "", timeout: float | None = None) -> list[T]:
        return [self.next_element(message, timeout) for _ in range(n)]

    def request_next_element(self, message: str = "") -> T:
        self.request(1)
        return self.next_element(message or violation("1.1", "request(1) did not produce an element"))

    def request_next_element_or_end_of_stream(self, message: str) -> Any:
        self.request(1)
        sig = self._received.poll(self.env.timeout)
        if sig is None:
            fail(f"{message}: neither on_next nor on_complete within {_ms(self.env.timeout)}")
        if sig[0] == "next":
            return sig[1]
        if sig[0] == "complete":
            return END
        fail(f"{message}: unexpected {_describe(sig)}")

    def expect_completion(self, message: str = "", timeout: float | None = None) -> None:
        t = self.env.timeout if timeout is None else timeout
        self._received.expect_completion(message or violation("1.5", "expected on_complete"), t)

    def request_end_of_stream(self, message: str = "") -> None:
        self.request(1)
        self.expect_completion(message)

    def expect_error(
        self,
        types: tuple[type[BaseException], ...],
        message: str,
        timeout: float | None = None,
    ) -> BaseException:
        t = self.env.timeout if timeout is None else timeout
        return self._received.expect_error(types, message, t)

    def expect_none(self, message: str = "", timeout: float | None = None) -> None:
        t = self.env.no_signals_timeout if timeout is None else timeout
        self._received.expect_none(message or violation("1.1", "expected no signal"), t)


# ---------------------------------------------------------------------------------------------------
# Subscriber-side actors: the kit plays the Publisher


class TckSubscription:
    """The Subscription the kit hands to a Subscriber under test; records and checks its calls.

    Detectors: request/cancel from inside on_complete/on_error on the same thread (2.3), overlapping
    calls from two threads (2.7), non-positive requests (3.9), calls after the Subscriber processed a
    terminal signal (2.4, when ``strict_after_terminal``), requests on a Subscription that must be
    cancelled (2.5, when ``reject_requests`` is set).
    """

    def __init__(self, env: TestEnvironment, name: str = "Subscription") -> None:
        self._env = env
        self.name = name
        self._cond = threading.Condition(threading.Lock())
        self._requests: deque[int] = deque()
        self.total_requested = 0
        self.request_calls = 0
        self.cancel_calls = 0
        self.cancelled = Latch(env)
        self.detector = ConcurrencyDetector(env, "2.7", "request/cancel calls on one Subscription")
        self.terminal_processed: str | None = None
        self.strict_after_terminal = False
        self.reject_requests: str | None = None
        self.call_delay = 0.0

    def _check(self, method: str) -> None:
        inside = self._env.terminal_signal_in_progress(self)
        if inside is not None:
            self._env.flop(
                violation("2.3", f"the Subscriber called Subscription.{method} from within {inside}")
            )
        if self.strict_after_terminal and self.terminal_processed is not None:
            self._env.flop(
                violation(
                    "2.4",
                    f"the Subscriber called Subscription.{method} after it had processed "
                    f"{self.terminal_processed}; the Subscription must be considered cancelled",
                )
            )

    def request(self, n: int) -> None:
        owned = self.detector.enter(f"request({n!r})")
        try:
            self._check(f"request({n!r})")
            if self.reject_requests is not None:
                self._env.flop(self.reject_requests)
            if type(n) is not int or n <= 0:
                self._env.flop(
                    violation("3.9", f"the Subscriber called request({n!r}); demand must be a positive int")
                )
                return
            with self._cond:
                self.request_calls += 1
                self.total_requested += n
                self._requests.append(n)
                self._cond.notify_all()
            if self.call_delay:
                time.sleep(self.call_delay)
        finally:
            self.detector.exit(owned)

    def cancel(self) -> None:
        owned = self.detector.enter("cancel()")
        try:
            self._check("cancel()")
            self.cancelled.close()
            with self._cond:
                self.cancel_calls += 1
                self._cond.notify_all()
            if self.call_delay:
                time.sleep(self.call_delay)
        finally:
            self.detector.exit(owned)

    # -- expectations -------------------------------------------------------------------------------
    def expect_request(self, message: str = "", timeout: float | None = None) -> int:
        t = self._env.timeout if timeout is None else timeout
        deadline = time.monotonic() + t
        with self._cond:
            while not self._requests:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    fail(
                        (message or violation("2.1", "the Subscriber did not signal demand with request(n)"))
                        + f" (waited {_ms(t)})"
                    )
                self._cond.wait(remaining)
            return self._requests.popleft()

    def expect_no_request(self, message: str, timeout: float | None = None) -> None:
        t = self._env.no_signals_timeout if timeout is None else timeout
        deadline = time.monotonic() + t
        with self._cond:
            while not self._requests:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                self._cond.wait(remaining)
            n = self._requests[0]
        fail(f"{message}: unexpected request({n})")

    def await_outstanding_demand(self, sent: int, timeout: float) -> bool:
        """Wait until the Subscriber has requested more than ``sent`` elements in total."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.total_requested <= sent:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.cancelled.is_closed:
                    return False
                self._cond.wait(remaining)
            return True

    def drain_requests(self) -> int:
        """Remove every recorded request; return their sum."""
        with self._cond:
            total = sum(self._requests)
            self._requests.clear()
            return total

    def expect_cancelling(self, message: str, timeout: float | None = None) -> None:
        self.cancelled.expect_close(message, timeout)


def _signal_name(method: str, arg: object) -> str:
    return f"{method}({arg!r})" if method != "on_complete" else "on_complete()"


class ManualPublisher(Generic[T]):
    """A kit-driven Publisher for one Subscriber under test: the test sends each signal itself.

    Signals are sent from the test thread (serially, rule 1.3). An exception escaping the Subscriber's
    signal method is recorded as a violation of ``rule`` (2.13 by default).
    """

    def __init__(self, env: TestEnvironment) -> None:
        self.env = env
        self.subscriber: Subscriber[T] | None = None
        self.subscription = TckSubscription(env)
        self._serial = threading.RLock()

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        if subscriber is None:
            raise TypeError("subscribe(None)")
        if self.subscriber is not None:
            self.env.flop("the kit's ManualPublisher supports one Subscriber only (rule 1.10: same Subscriber twice?)")
            return
        self.subscriber = subscriber
        self.deliver(subscriber, "on_subscribe", self.subscription)

    def deliver(self, subscriber: Subscriber[Any], method: str, arg: object = None, rule: str = "2.13") -> bool:
        """Call ``subscriber.<method>(arg)``; record a violation of ``rule`` if it raises."""
        with self._serial:
            try:
                if method == "on_complete":
                    with self.env.inside_terminal_signal(self.subscription, "on_complete"):
                        subscriber.on_complete()
                elif method == "on_error":
                    with self.env.inside_terminal_signal(self.subscription, "on_error"):
                        subscriber.on_error(arg)  # type: ignore[arg-type]
                else:
                    getattr(subscriber, method)(arg)
                return True
            except Exception as exc:  # noqa: BLE001 - reported as a violation
                self.env.flop(
                    violation(
                        rule,
                        f"{_signal_name(method, arg)} raised {type(exc).__name__}: {exc} "
                        "(signal methods must return normally, rule 2.13)",
                    )
                )
                return False

    def _sub(self) -> Subscriber[T]:
        if self.subscriber is None:
            fail("kit error: the ManualPublisher has no Subscriber yet")
        return self.subscriber

    def send_next(self, element: T, rule: str = "2.13") -> bool:
        return self.deliver(self._sub(), "on_next", element, rule)

    def send_completion(self, rule: str = "2.13") -> bool:
        return self.deliver(self._sub(), "on_complete", None, rule)

    def send_error(self, error: BaseException, rule: str = "2.13") -> bool:
        return self.deliver(self._sub(), "on_error", error, rule)


class SubscriberPuppet(Protocol):
    """What a whitebox Subscriber gives the kit through ``probe.register_on_subscribe(puppet)``.

    ``trigger_request(n)`` makes the Subscriber call ``request(n)`` on its Subscription;
    ``signal_cancel()`` makes it call ``cancel()``.

    Example::

        class Puppet:                        # any object with these two methods
            def __init__(self, subscription): self.s = subscription
            def trigger_request(self, n): self.s.request(n)
            def signal_cancel(self): self.s.cancel()
        # in the Subscriber's on_subscribe(s): self.probe.register_on_subscribe(Puppet(s))
    """

    def trigger_request(self, n: int) -> None: ...

    def signal_cancel(self) -> None: ...


class WhiteboxSubscriberProbe(Generic[T]):
    """The probe a whitebox Subscriber under test reports to from its signal methods.

    The Subscriber calls ``register_on_subscribe(puppet)`` from ``on_subscribe``, and
    ``register_on_next(x)``, ``register_on_complete()``, ``register_on_error(e)`` once it has
    processed the respective signal. The kit then steers it through the puppet.

    Example::

        probe = WhiteboxSubscriberProbe(TestEnvironment())   # the kit passes one to create_subscriber
        probe.register_on_next(1)                            # what the Subscriber reports
        probe.expect_next(1)                                 # what the kit checks
        probe.register_on_complete(); probe.expect_completion()
    """

    def __init__(self, env: TestEnvironment, subscription: TckSubscription | None = None) -> None:
        self.env = env
        self._subscription = subscription
        self._puppet: Promise[SubscriberPuppet] = Promise(env)  # a 2nd registration is ignored (2.5 test)
        self._received = Receptacle(env)

    # -- called by the Subscriber under test --------------------------------------------------------
    def register_on_subscribe(self, puppet: SubscriberPuppet) -> None:
        if puppet is None:
            self.env.flop("whitebox setup: probe.register_on_subscribe(None); pass a SubscriberPuppet")
            return
        self._puppet.complete(puppet)

    def register_on_next(self, element: T) -> None:
        if element is None:
            self.env.flop(violation("2.13", "probe.register_on_next(None): the Subscriber processed a None element"))
        self._received.add(("next", element))

    def register_on_complete(self) -> None:
        if self._subscription is not None:
            self._subscription.terminal_processed = "on_complete"
        self._received.add(("complete", None))

    def register_on_error(self, error: BaseException) -> None:
        if self._subscription is not None:
            self._subscription.terminal_processed = f"on_error({type(error).__name__})"
        self._received.add(("error", error))

    # -- used by the kit ----------------------------------------------------------------------------
    def puppet(self) -> SubscriberPuppet:
        return self._puppet.value(
            "whitebox setup: the Subscriber under test did not call probe.register_on_subscribe(puppet) "
            "from on_subscribe (rule 1.9: on_subscribe must be processed first)"
        )

    @property
    def has_puppet(self) -> bool:
        return self._puppet.is_completed

    def expect_next(self, element: object, rule: str = "2.1", timeout: float | None = None) -> None:
        t = self.env.timeout if timeout is None else timeout
        got = self._received.next_element(
            violation(rule, f"the Subscriber did not process (probe.register_on_next) the element {element!r}"), t
        )
        if got != element:
            fail(violation(rule, f"the Subscriber processed {got!r} where {element!r} was sent"))

    def expect_completion(self, rule: str = "2.9", timeout: float | None = None) -> None:
        t = self.env.timeout if timeout is None else timeout
        self._received.expect_completion(
            violation(rule, "the Subscriber did not process (probe.register_on_complete) on_complete"), t
        )

    def expect_error(self, error: BaseException, rule: str = "2.10", timeout: float | None = None) -> None:
        t = self.env.timeout if timeout is None else timeout
        got = self._received.expect_error(
            (BaseException,), violation(rule, "the Subscriber did not process (probe.register_on_error) on_error"), t
        )
        if got is not error:
            fail(violation(rule, f"probe.register_on_error got {got!r} where {error!r} was signalled"))

    def expect_none(self, message: str, timeout: float | None = None) -> None:
        t = self.env.no_signals_timeout if timeout is None else timeout
        self._received.expect_none(message, t)
