"""The boundary with foreign code: what rstreams does when a Publisher or Subscriber it did not write
breaks a rule (2.13 None signals and raising subscribers, 3.9 bad demand, 2.12 a second
on_subscribe, 1.3 signals from two threads) through from_publisher/defer and the strict wrapper
every foreign subscriber gets."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from operators.harness import Boom
from rstreams import MAX_DEMAND, Flowable, plugins
from rstreams.errors import NoneElementError, ProtocolViolationError
from rstreams.testing import TestSubscriber


class _RawPublisher:
    """A foreign Publisher emitting ``items`` synchronously on request (it may break rule 2.13)."""

    def __init__(self, items: list[Any], terminal: str = "complete") -> None:
        self.items = items
        self.terminal = terminal
        self.raised: list[BaseException] = []
        self.cancelled = False

    def subscribe(self, subscriber: Any) -> None:
        pub = self
        it = iter(self.items)

        class _Sub:
            def request(self, n: int) -> None:
                for _ in range(n):
                    if pub.cancelled:
                        return
                    x = next(it, StopIteration)
                    if x is StopIteration:
                        pub._signal(subscriber.on_error, None) if pub.terminal == "error-none" else subscriber.on_complete()
                        return
                    pub._signal(subscriber.on_next, x)

            def cancel(self) -> None:
                pub.cancelled = True

        subscriber.on_subscribe(_Sub())

    def _signal(self, fn: Any, arg: Any) -> None:
        try:
            fn(arg)
        except TypeError as e:  # rule 2.13: the subscriber raised to the caller
            self.raised.append(e)


@pytest.mark.parametrize("op", [lambda f: f, lambda f: f.map(lambda x: x), lambda f: Flowable.zip(f, Flowable.range(0, 9), lambda a, b: (a, b))])
def test_rule_2_13_none_from_a_foreign_publisher_raises_to_it_cancels_and_fails_downstream(op: Any) -> None:
    pub = _RawPublisher([1, None, 2])
    ts: TestSubscriber[Any] = op(Flowable.from_publisher(pub)).test()
    assert len(pub.raised) == 1 and "2.13" in str(pub.raised[0])  # raised to the caller
    assert pub.cancelled  # rule 2.13: the subscription is considered cancelled
    ts.assert_error(TypeError).assert_no_violations()
    assert "2.13" in str(ts.errors[0])
    assert len(ts.values) <= 1  # the element before the None, at most (zip may not have paired it)
    assert all(None not in (v if isinstance(v, tuple) else (v,)) for v in ts.values)  # no row with None


def test_rule_2_13_on_error_none_from_a_foreign_publisher() -> None:
    pub = _RawPublisher([1], terminal="error-none")
    ts: TestSubscriber[Any] = Flowable.from_publisher(pub).test()
    assert len(pub.raised) == 1
    ts.assert_values(1).assert_error(TypeError).assert_no_violations()


def test_rule_2_13_foreign_publisher_on_subscribe_none_raises_to_it() -> None:
    class NoneSubscription:
        def subscribe(self, subscriber: Any) -> None:
            with pytest.raises(TypeError, match="2.13"):
                subscriber.on_subscribe(None)
            self.checked = True

    p = NoneSubscription()
    Flowable.from_publisher(p).test(0)
    assert p.checked


class _Foreign:
    """A plain foreign subscriber (gets wrapped in the strict subscriber)."""

    def __init__(self, n: int = MAX_DEMAND, raise_on: int | None = None) -> None:
        self.n = n
        self.raise_on = raise_on
        self.values: list[Any] = []
        self.errors: list[BaseException] = []
        self.completed = 0
        self.sub: Any = None

    def on_subscribe(self, s: Any) -> None:
        self.sub = s
        s.request(self.n)

    def on_next(self, x: Any) -> None:
        if self.raise_on is not None and x == self.raise_on:
            raise Boom("subscriber raised")
        self.values.append(x)

    def on_error(self, e: BaseException) -> None:
        self.errors.append(e)

    def on_complete(self) -> None:
        self.completed += 1


def test_rule_2_13_raising_foreign_subscriber_is_cancelled_and_reported() -> None:
    cancelled = []
    s = _Foreign(raise_on=2)
    with plugins.collect_errors() as errors:
        Flowable.range(0, 10).hide().do_on_cancel(lambda: cancelled.append(1)).subscribe(s)
    assert s.values == [0, 1] and s.completed == 0 and not s.errors
    assert cancelled == [1]
    assert len(errors) == 1 and isinstance(errors[0], Boom)


def test_rule_3_9_foreign_subscriber_bad_request_gets_value_error() -> None:
    s = _Foreign(n=0)
    Flowable.range(0, 10).subscribe(s)
    assert len(s.errors) == 1 and isinstance(s.errors[0], ValueError) and "3.9" in str(s.errors[0])
    s.sub.request(5)  # rule 3.6: no-op after the terminal signal
    assert s.values == []


def test_rule_2_12_double_on_subscribe_to_strict_wrapper_is_refused() -> None:
    from rstreams._internal.subscribers import StrictSubscriber

    s = _Foreign()
    w: StrictSubscriber[Any] = StrictSubscriber(s)

    class Sub:
        def __init__(self) -> None:
            self.cancelled = False

        def request(self, n: int) -> None:
            pass

        def cancel(self) -> None:
            self.cancelled = True

    a, b = Sub(), Sub()
    w.on_subscribe(a)
    w.on_subscribe(b)
    assert b.cancelled and a.cancelled
    assert len(s.errors) == 1 and isinstance(s.errors[0], ProtocolViolationError) and s.errors[0].rule == "2.12"


def test_rule_1_3_strict_wrapper_serializes_terminal_from_other_thread() -> None:
    from rstreams._internal.subscribers import StrictSubscriber

    ts: TestSubscriber[int] = TestSubscriber()
    w: StrictSubscriber[int] = StrictSubscriber(ts)  # type: ignore[arg-type]
    from rstreams._internal.subscriptions import EMPTY

    w.on_subscribe(EMPTY)
    stop = threading.Event()

    def emitter() -> None:
        i = 0
        while not stop.is_set() and i < 20000:
            w.on_next(i)
            i += 1

    t = threading.Thread(target=emitter)
    t.start()
    w.on_error(Boom())
    stop.set()
    t.join(5)
    assert len(ts.errors) == 1
    ts.assert_no_violations()


def test_rule_2_13_on_next_none_to_wrapper_is_type_error() -> None:
    from rstreams._internal.subscribers import StrictSubscriber

    w: StrictSubscriber[Any] = StrictSubscriber(_Foreign())
    with pytest.raises(NoneElementError):
        w.on_subscribe(None)  # type: ignore[arg-type]
    with pytest.raises(NoneElementError):
        w.on_error(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("variant", ["ordered", "locked"])
def test_rule_1_3_strict_wrapper_both_variants_never_overlap_terminal_and_next(variant: str) -> None:
    """The lock-free path (GIL builds) and the locked path (free-threaded builds) of the strict
    wrapper: a terminal signal from another thread never overlaps an on_next, and is never lost."""
    from rstreams._internal.subscribers import StrictSubscriber
    from rstreams._internal.subscriptions import EMPTY

    class Locked(StrictSubscriber[int]):
        __slots__ = ()
        on_next = StrictSubscriber._on_next_locked

    cls = StrictSubscriber if variant == "ordered" else Locked
    for seed in range(30):
        ts: TestSubscriber[int] = TestSubscriber()
        w = cls(ts)  # type: ignore[arg-type]
        w.on_subscribe(EMPTY)
        barrier = threading.Barrier(2)

        def emit(w: Any = w, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            for i in range(2000):
                w.on_next(i)

        t = threading.Thread(target=emit)
        t.start()
        barrier.wait()
        if seed % 2:
            w.on_complete()
        else:
            w.on_error(Boom())
        t.join(5)
        assert len(ts.errors) + ts.completions == 1, f"seed {seed}: terminal lost or doubled"
        ts.assert_no_violations()


def test_defer_of_a_foreign_publisher_gets_the_rule_2_13_guard() -> None:
    pub = _RawPublisher([1, None])
    ts: TestSubscriber[Any] = Flowable.defer(lambda: pub).test()
    ts.assert_values(1).assert_error(TypeError).assert_no_violations()
    assert pub.cancelled and len(pub.raised) == 1
