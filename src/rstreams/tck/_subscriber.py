"""Subscriber verifications: whitebox (the Subscriber reports to a probe) and blackbox."""

from __future__ import annotations

import threading
import time
from typing import Any, Generic, TypeVar

from .._spec import Publisher, Subscriber, Subscription, violation
from ._base import MappedRange, VerificationBase
from ._env import (
    ConcurrencyDetector,
    ManualPublisher,
    TckSubscription,
    TestEnvironment,
    WhiteboxSubscriberProbe,
)
from ._outcomes import fail, tck_test
from ._reference import ThreadPoolIterablePublisher

__all__ = ["SubscriberWhiteboxVerification", "SubscriberBlackboxVerification"]

T = TypeVar("T")


class _WatchedSubscription:
    """Wraps a real Publisher's Subscription: counts requests, flags overlapping calls (rule 2.7)."""

    def __init__(self, env: TestEnvironment, inner: Subscription) -> None:
        self._inner = inner
        self.detector = ConcurrencyDetector(env, "2.7", "request/cancel calls on one Subscription")
        self.requested = 0
        self.cancelled = False

    def request(self, n: int) -> None:
        with self.detector.guard(f"request({n!r})"):
            if isinstance(n, int) and n > 0:
                self.requested += n
            self._inner.request(n)

    def cancel(self) -> None:
        with self.detector.guard("cancel()"):
            self.cancelled = True
            self._inner.cancel()


class _SubscriberProxy:
    """Sits between a real Publisher and the Subscriber under test; records what was delivered and
    flags a signal method that raises (rule 2.13) instead of letting the error reach the Publisher."""

    def __init__(self, env: TestEnvironment, sub: Subscriber[Any]) -> None:
        self._env = env
        self._sub = sub
        self.subscription: _WatchedSubscription | None = None
        self.delivered = 0
        self.terminated = threading.Event()
        self.last_signal = time.monotonic()

    def _call(self, method: str, *args: Any) -> None:
        self.last_signal = time.monotonic()
        try:
            getattr(self._sub, method)(*args)
        except Exception as exc:  # noqa: BLE001
            shown = f"{method}({args[0]!r})" if args else f"{method}()"
            self._env.flop(violation("2.13", f"{shown} raised {type(exc).__name__}: {exc}"))

    def on_subscribe(self, subscription: Subscription) -> None:
        self.subscription = _WatchedSubscription(self._env, subscription)
        self._call("on_subscribe", self.subscription)

    def on_next(self, item: Any) -> None:
        self.delivered += 1
        self._call("on_next", item)

    def on_error(self, error: BaseException) -> None:
        self._call("on_error", error)
        self.terminated.set()

    def on_complete(self) -> None:
        self._call("on_complete")
        self.terminated.set()


class _SubscriberVerificationBase(VerificationBase, Generic[T]):
    __test__ = False

    def create_element(self, element: int) -> T:
        """Map an element id to an element (default: the int itself). May be called concurrently."""
        return element  # type: ignore[return-value]

    def create_helper_publisher(self, elements: int) -> Publisher[T]:
        """A Publisher of ``elements`` elements (default: the kit's thread-pool iterable publisher)."""
        return ThreadPoolIterablePublisher(MappedRange(elements, self.create_element))

    def _stage_subscriber(self) -> Subscriber[T]:
        raise NotImplementedError

    # shared scenario helpers --------------------------------------------------------------------------
    def _second_subscription_must_be_cancelled(self, publisher: ManualPublisher[T], sub: Subscriber[T]) -> None:
        second = TckSubscription(self.env, "second Subscription")
        second.reject_requests = violation(
            "2.5", "the Subscriber requested from a second Subscription instead of cancelling it"
        )
        publisher.deliver(sub, "on_subscribe", second)
        second.expect_cancelling(
            violation("2.5", "the Subscriber did not cancel a second Subscription passed to on_subscribe")
        )

    def _none_must_raise(self, sub: Subscriber[T], method: str) -> None:
        try:
            getattr(sub, method)(None)
        except TypeError:
            return
        except Exception as exc:  # noqa: BLE001
            fail(violation("2.13", f"{method}(None) must raise TypeError, but raised {type(exc).__name__}: {exc}"))
        fail(violation("2.13", f"{method}(None) returned normally; it must raise TypeError"))

    def _subscribe_to_helper(self, sub: Subscriber[T], elements: int) -> _SubscriberProxy:
        proxy = _SubscriberProxy(self.env, sub)
        try:
            pub = self.create_helper_publisher(elements)
            pub.subscribe(proxy)
        except Exception as exc:  # noqa: BLE001
            fail(f"setup: the helper publisher failed: {type(exc).__name__}: {exc}")
        return proxy

    def _serial_calls(self, publisher: ManualPublisher[T], start_id: int) -> None:
        """Send up to 20 elements, each on a different thread (serially), as demand allows (rule 2.7)."""
        subscription = publisher.subscription
        subscription.call_delay = 0.002  # widen the window in which overlapping calls are seen
        sent = 0
        for i in range(20):
            if not subscription.await_outstanding_demand(sent, 2 * self.env.no_signals_timeout):
                break
            element = self.create_element(start_id + i)
            t = threading.Thread(target=publisher.send_next, args=(element,), name=f"rstreams-tck-sender-{i}", daemon=True)
            t.start()
            t.join(self.env.timeout * 5)
            if t.is_alive():
                fail(violation("2.13", "on_next did not return in time"))
            sent += 1
        if not subscription.cancelled.is_closed:
            publisher.send_completion()


class _WhiteboxStage(Generic[T]):
    def __init__(self, verification: SubscriberWhiteboxVerification[T], *, strict_after_terminal: bool = False) -> None:
        env = verification.env
        self.env = env
        self.verification = verification
        self.publisher: ManualPublisher[T] = ManualPublisher(env)
        self.subscription = self.publisher.subscription
        self.subscription.strict_after_terminal = strict_after_terminal
        self.probe: WhiteboxSubscriberProbe[T] = WhiteboxSubscriberProbe(env, self.subscription)
        try:
            sub = verification.create_subscriber(self.probe)
        except Exception as exc:  # noqa: BLE001
            fail(f"setup: create_subscriber(probe) raised {type(exc).__name__}: {exc}")
        if sub is None:
            fail("setup: create_subscriber(probe) returned None")
        self.sub: Subscriber[T] = sub
        self.publisher.subscribe(sub)
        self.puppet = self.probe.puppet()
        self._next_id = 0

    def signal_next(self) -> T:
        element = self.verification.create_element(self._next_id)
        self._next_id += 1
        self.publisher.send_next(element)
        return element

    def expect_request(self, rule: str = "2.1") -> int:
        return self.subscription.expect_request(
            violation(rule, "the Subscriber did not call request(n) when triggered by puppet.trigger_request")
        )

    def trigger_request(self, n: int, rule: str = "2.1") -> None:
        """``puppet.trigger_request(n)``; an exception from it fails the test naming ``rule``."""
        try:
            self.puppet.trigger_request(n)
        except Exception as exc:  # noqa: BLE001
            fail(violation(rule, f"puppet.trigger_request({n}) raised {type(exc).__name__}: {exc}"))


class SubscriberWhiteboxVerification(_SubscriberVerificationBase[T]):
    """Verifies a Subscriber that reports what it does to a :class:`WhiteboxSubscriberProbe`.

    The Subscriber under test must call ``probe.register_on_subscribe(puppet)`` from ``on_subscribe``
    (the puppet's ``trigger_request(n)``/``signal_cancel()`` make it call ``request``/``cancel``), and
    ``probe.register_on_next(x)``, ``register_on_complete()``, ``register_on_error(e)`` once it has
    processed each signal.

    Example::

        from rstreams.tck import SubscriberWhiteboxVerification, SyncSubscriber

        class ProbedSync(SyncSubscriber):
            def __init__(self, probe):
                super().__init__()
                self.probe = probe
            def on_subscribe(self, s):
                super().on_subscribe(s)
                self.probe.register_on_subscribe(self)   # SyncSubscriber is its own puppet
            def when_next(self, item):
                self.probe.register_on_next(item)
                return True
            def when_complete(self): self.probe.register_on_complete()
            def when_error(self, e): self.probe.register_on_error(e)

        class TestSyncSubscriber(SubscriberWhiteboxVerification):
            def create_subscriber(self, probe): return ProbedSync(probe)
    """

    __test__ = False

    def create_subscriber(self, probe: WhiteboxSubscriberProbe[T]) -> Subscriber[T]:
        """Return the Subscriber under test, wired to ``probe``."""
        raise NotImplementedError(f"{type(self).__name__} must implement create_subscriber(probe)")

    def _stage(self, strict_after_terminal: bool = False) -> _WhiteboxStage[T]:
        return _WhiteboxStage(self, strict_after_terminal=strict_after_terminal)

    # ------------------------------------------------------------------------------------------------
    @tck_test("setup")
    def test_required_exercise_whitebox_happy_path(self) -> None:
        """As the JVM kit: trigger_request(1) twice, one request expected; an element; trigger_request(1)
        again and, if the first request was for 1 element (one-at-a-time Subscribers request the next
        only after an element arrived), a second request before the second element; then cancel."""
        stage = self._stage()
        stage.trigger_request(1)
        stage.trigger_request(1)
        requested = stage.expect_request()
        stage.probe.expect_next(stage.signal_next())
        stage.trigger_request(1)
        if requested == 1:
            stage.expect_request()
        stage.probe.expect_next(stage.signal_next())
        stage.puppet.signal_cancel()
        stage.subscription.expect_cancelling(
            violation("2.6", "the Subscriber did not call cancel() when triggered by puppet.signal_cancel()")
        )
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec201_must_signal_demand_via_subscription_request(self) -> None:
        stage = self._stage()
        stage.trigger_request(1)
        stage.expect_request()
        stage.signal_next()  # as the JVM kit: the requested element is delivered (it must not raise, 2.13)
        self.env.verify_no_violations()

    @tck_test()
    def test_untested_spec202_should_asynchronously_dispatch(self) -> None:
        """a SHOULD rule about design"""

    def _terminal_without_setup(self, method: str) -> None:
        """As the JVM kit's 'without setup' 2.3 tests: on_subscribe then at once on_complete/on_error,
        flagging request/cancel calls made from within it; the probe is not consulted (the 2.9/2.10
        tests check what the Subscriber processed)."""
        try:
            sub = self.create_subscriber(WhiteboxSubscriberProbe(self.env))
        except Exception as exc:  # noqa: BLE001
            fail(f"setup: create_subscriber(probe) raised {type(exc).__name__}: {exc}")
        if sub is None:
            fail("setup: create_subscriber(probe) returned None")
        publisher: ManualPublisher[T] = ManualPublisher(self.env)
        publisher.subscribe(sub)
        if method == "on_complete":
            publisher.send_completion()
        else:
            publisher.send_error(RuntimeError("rstreams.tck: test error"))
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_complete(self) -> None:
        self._terminal_without_setup("on_complete")

    @tck_test()
    def test_required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_error(self) -> None:
        self._terminal_without_setup("on_error")

    @tck_test()
    def test_untested_spec204_must_consider_the_subscription_as_cancelled_in_after_recieving_on_complete_or_on_error(
        self,
    ) -> None:
        """test_required_py_spec204_must_not_call_subscription_after_processing_on_complete"""

    @tck_test()
    def test_required_spec205_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal(  # noqa: E501
        self,
    ) -> None:
        stage = self._stage()
        self._second_subscription_must_be_cancelled(stage.publisher, stage.sub)
        self.env.verify_no_violations()

    @tck_test()
    def test_untested_spec206_must_call_subscription_cancel_if_it_is_no_longer_valid(self) -> None:
        """'no longer valid' is the Subscriber's own judgement"""

    @tck_test()
    def test_untested_spec207_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization(  # noqa: E501
        self,
    ) -> None:
        """test_required_py_spec207_must_call_request_and_cancel_serially"""

    @tck_test()
    def test_required_spec208_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel(
        self,
    ) -> None:
        stage = self._stage()
        stage.trigger_request(1)
        stage.expect_request()
        stage.puppet.signal_cancel()
        stage.subscription.expect_cancelling(
            violation("2.6", "the Subscriber did not call cancel() when triggered by puppet.signal_cancel()")
        )
        stage.publisher.send_next(stage.verification.create_element(0), rule="2.8")
        # as the JVM kit: more demand triggered after cancel must not make the Subscriber fail either
        stage.trigger_request(1, rule="2.8")
        stage.trigger_request(1, rule="2.8")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec209_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call(
        self,
    ) -> None:
        stage = self._stage()
        stage.trigger_request(1)
        stage.expect_request()
        stage.publisher.send_completion(rule="2.9")
        stage.probe.expect_completion("2.9")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec209_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call(
        self,
    ) -> None:
        stage = self._stage()
        stage.publisher.send_completion(rule="2.9")
        stage.probe.expect_completion("2.9")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec210_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call(
        self,
    ) -> None:
        stage = self._stage()
        stage.trigger_request(1)
        stage.expect_request()
        error = RuntimeError("rstreams.tck: test error")
        stage.publisher.send_error(error, rule="2.10")
        stage.probe.expect_error(error, "2.10")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec210_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call(
        self,
    ) -> None:
        stage = self._stage()
        error = RuntimeError("rstreams.tck: test error")
        stage.publisher.send_error(error, rule="2.10")
        stage.probe.expect_error(error, "2.10")
        self.env.verify_no_violations()

    @tck_test()
    def test_untested_spec211_must_make_sure_that_all_calls_on_its_methods_happen_before_the_processing_of_the_respective_events(  # noqa: E501
        self,
    ) -> None:
        """memory visibility is not observable from Python code"""

    @tck_test()
    def test_untested_spec212_must_not_call_on_subscribe_more_than_once_based_on_object_equality_spec_violation(
        self,
    ) -> None:
        """the Publisher side is checked by test_required_py_spec110_subscribe_same_subscriber_twice..."""

    @tck_test()
    def test_untested_spec213_failing_on_signal_invocation(self) -> None:
        """raising signal methods fail the 2.9/2.10 tests; the Publisher side is checked by py_spec213"""

    @tck_test()
    def test_required_spec213_on_subscribe_must_throw_type_error_when_parameters_are_none(self) -> None:
        stage = self._stage()
        self._none_must_raise(stage.sub, "on_subscribe")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec213_on_next_must_throw_type_error_when_parameters_are_none(self) -> None:
        stage = self._stage()
        self._none_must_raise(stage.sub, "on_next")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec213_on_error_must_throw_type_error_when_parameters_are_none(self) -> None:
        stage = self._stage()
        self._none_must_raise(stage.sub, "on_error")
        self.env.verify_no_violations()

    @tck_test()
    def test_untested_spec301_must_not_be_called_outside_subscriber_context(self) -> None:
        """'the context of its Subscriber' is not observable"""

    @tck_test()
    def test_required_spec308_request_must_register_given_number_elements_to_be_produced(self) -> None:
        stage = self._stage()
        stage.trigger_request(2, rule="3.8")
        requested = stage.expect_request("3.8")
        stage.probe.expect_next(stage.signal_next(), "3.8")
        if requested == 1:
            stage.expect_request("3.8")
        stage.probe.expect_next(stage.signal_next(), "3.8")
        stage.probe.expect_none(violation("3.8", "the Subscriber processed a signal that was never sent"))
        stage.trigger_request(3, rule="3.8")
        self.env.verify_no_violations()

    @tck_test()
    def test_untested_spec310_request_may_synchronously_call_on_next_on_subscriber(self) -> None:
        """a MAY rule for Publishers; observed by PublisherVerification.test_optional_py_spec310"""

    @tck_test()
    def test_untested_spec311_request_may_synchronously_call_on_complete_or_on_error(self) -> None:
        """a MAY rule for Publishers; observed by PublisherVerification.test_optional_py_spec311"""

    @tck_test()
    def test_untested_spec314_cancel_may_cause_the_publisher_to_shutdown_if_no_other_subscription_exists(
        self,
    ) -> None:
        """a MAY rule"""

    @tck_test()
    def test_untested_spec315_cancel_must_not_throw_exception_and_must_signal_on_error(self) -> None:
        """a Publisher rule; checked by PublisherVerification.test_required_py_spec315"""

    @tck_test()
    def test_untested_spec316_request_must_not_throw_exception_and_must_on_error_the_subscriber(self) -> None:
        """a Publisher rule; checked by PublisherVerification.test_required_py_spec316"""

    # -- Python additions ----------------------------------------------------------------------------
    @tck_test()
    def test_required_py_spec204_must_not_call_subscription_after_processing_on_complete(self) -> None:
        """Rule 2.4 (JVM: untested): once the Subscriber has processed on_complete (probe.register_on_complete),
        it must not call request or cancel any more."""
        stage = self._stage(strict_after_terminal=True)
        stage.trigger_request(1)
        stage.expect_request()
        stage.publisher.send_completion(rule="2.9")
        stage.probe.expect_completion("2.9")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_py_spec204_must_not_call_subscription_after_processing_on_error(self) -> None:
        """Rule 2.4 (JVM: untested): the same after on_error."""
        stage = self._stage(strict_after_terminal=True)
        stage.trigger_request(1)
        stage.expect_request()
        error = RuntimeError("rstreams.tck: test error")
        stage.publisher.send_error(error, rule="2.10")
        stage.probe.expect_error(error, "2.10")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_py_spec201_must_consume_an_asynchronous_helper_publisher(self) -> None:
        """Rule 2.1 with a real asynchronous Publisher (create_helper_publisher, signals on pool
        threads): after puppet.trigger_request(11) the Subscriber processes the 10 elements in order
        and the completion; its signal methods return normally (2.13), its calls stay serial (2.7)."""
        probe: WhiteboxSubscriberProbe[T] = WhiteboxSubscriberProbe(self.env)
        try:
            sub = self.create_subscriber(probe)
        except Exception as exc:  # noqa: BLE001
            fail(f"setup: create_subscriber(probe) raised {type(exc).__name__}: {exc}")
        self._subscribe_to_helper(sub, 10)
        probe.puppet().trigger_request(11)
        for i in range(10):
            probe.expect_next(self.create_element(i), "2.1")
        probe.expect_completion("2.9")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_py_spec207_must_call_request_and_cancel_serially(self) -> None:
        """Rule 2.7 (JVM: untested): elements arrive from a different thread each time (serially); the
        Subscription flags request/cancel calls that overlap in time from two threads."""
        stage = self._stage()
        stage.trigger_request(1)
        stage.expect_request()
        self._serial_calls(stage.publisher, 0)
        self.env.verify_no_violations()


class _BlackboxStage(Generic[T]):
    """The kit's ManualPublisher with the Subscriber under test subscribed. ``trigger``: call the
    verification's trigger_request hook (as the JVM kit, only in the tests that expect a request)."""

    def __init__(self, verification: SubscriberBlackboxVerification[T], trigger: bool = False) -> None:
        env = verification.env
        self.env = env
        self.publisher: ManualPublisher[T] = ManualPublisher(env)
        self.subscription = self.publisher.subscription
        try:
            sub = verification.create_subscriber()
        except Exception as exc:  # noqa: BLE001
            fail(f"setup: create_subscriber() raised {type(exc).__name__}: {exc}")
        if sub is None:
            fail("setup: create_subscriber() returned None")
        self.sub: Subscriber[T] = sub
        self.publisher.subscribe(sub)
        if trigger:
            try:
                verification.trigger_request(sub)
            except Exception as exc:  # noqa: BLE001
                fail(f"setup: trigger_request(subscriber) raised {type(exc).__name__}: {exc}")

    def expect_request(self) -> int:
        return self.subscription.expect_request(
            violation("2.1", "the Subscriber did not signal demand with request(n)")
        )


class SubscriberBlackboxVerification(_SubscriberVerificationBase[T]):
    """Verifies a Subscriber from the outside: the kit plays its Publisher and watches its Subscription.

    Example::

        from rstreams.tck import SubscriberBlackboxVerification, AsyncSubscriber

        class TestAsyncSubscriber(SubscriberBlackboxVerification):
            def create_subscriber(self): return AsyncSubscriber()

    Override :meth:`trigger_request` if the Subscriber needs a nudge before it requests.
    """

    __test__ = False

    def create_subscriber(self) -> Subscriber[T]:
        """Return the Subscriber under test."""
        raise NotImplementedError(f"{type(self).__name__} must implement create_subscriber()")

    def trigger_request(self, subscriber: Subscriber[T]) -> None:
        """Hook: make ``subscriber`` request, for Subscribers that need an outside nudge (default: nothing)."""

    def _stage(self, trigger: bool = False) -> _BlackboxStage[T]:
        return _BlackboxStage(self, trigger)

    def _fresh_subscriber(self, subscribed: bool) -> Subscriber[T]:
        """A new Subscriber under test outside any stage (the JVM kit's 'without setup' tests);
        ``subscribed``: first hand it a Subscription that records calls and does nothing else."""
        try:
            sub = self.create_subscriber()
        except Exception as exc:  # noqa: BLE001
            fail(f"setup: create_subscriber() raised {type(exc).__name__}: {exc}")
        if sub is None:
            fail("setup: create_subscriber() returned None")
        if subscribed:
            ManualPublisher[T](self.env).subscribe(sub)
        return sub

    @tck_test()
    def test_required_spec201_blackbox_must_signal_demand_via_subscription_request(self) -> None:
        stage = self._stage(trigger=True)
        n = stage.expect_request()
        for i in range(min(n, 32)):
            stage.publisher.send_next(self.create_element(i))
        stage.publisher.send_completion()
        self.env.verify_no_violations()

    @tck_test()
    def test_untested_spec202_blackbox_should_asynchronously_dispatch(self) -> None:
        """a SHOULD rule about design"""

    @tck_test()
    def test_required_spec203_blackbox_must_not_call_methods_on_subscription_or_publisher_in_on_complete(
        self,
    ) -> None:
        stage = self._stage()
        stage.publisher.send_completion()
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec203_blackbox_must_not_call_methods_on_subscription_or_publisher_in_on_error(self) -> None:
        stage = self._stage()
        stage.publisher.send_error(RuntimeError("rstreams.tck: test error"))
        self.env.verify_no_violations()

    @tck_test()
    def test_untested_spec204_blackbox_must_consider_the_subscription_as_cancelled_in_after_recieving_on_complete_or_on_error(  # noqa: E501
        self,
    ) -> None:
        """without a probe the kit cannot tell when the terminal signal was processed (see whitebox py_spec204)"""

    @tck_test()
    def test_required_spec205_blackbox_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal(  # noqa: E501
        self,
    ) -> None:
        stage = self._stage()
        self._second_subscription_must_be_cancelled(stage.publisher, stage.sub)
        self.env.verify_no_violations()

    @tck_test()
    def test_untested_spec206_blackbox_must_call_subscription_cancel_if_it_is_no_longer_valid(self) -> None:
        """'no longer valid' is the Subscriber's own judgement"""

    @tck_test()
    def test_untested_spec207_blackbox_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization(  # noqa: E501
        self,
    ) -> None:
        """test_required_py_spec207_blackbox_must_call_request_and_cancel_serially"""

    @tck_test()
    def test_untested_spec208_blackbox_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel(  # noqa: E501
        self,
    ) -> None:
        """the kit cannot make a blackbox Subscriber cancel (see the whitebox test)"""

    @tck_test()
    def test_required_spec209_blackbox_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call(  # noqa: E501
        self,
    ) -> None:
        stage = self._stage(trigger=True)
        stage.expect_request()
        stage.publisher.send_completion(rule="2.9")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec209_blackbox_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call(  # noqa: E501
        self,
    ) -> None:
        stage = self._stage()
        stage.publisher.send_completion(rule="2.9")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec210_blackbox_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call(
        self,
    ) -> None:
        stage = self._stage(trigger=True)
        stage.expect_request()
        stage.publisher.send_error(RuntimeError("rstreams.tck: test error"), rule="2.10")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec210_blackbox_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call(  # noqa: E501
        self,
    ) -> None:
        stage = self._stage()
        stage.publisher.send_error(RuntimeError("rstreams.tck: test error"), rule="2.10")
        self.env.verify_no_violations()

    @tck_test()
    def test_untested_spec211_blackbox_must_make_sure_that_all_calls_on_its_methods_happen_before_the_processing_of_the_respective_events(  # noqa: E501
        self,
    ) -> None:
        """memory visibility is not observable from Python code"""

    @tck_test()
    def test_untested_spec212_blackbox_must_not_call_on_subscribe_more_than_once_based_on_object_equality(
        self,
    ) -> None:
        """the Publisher side is checked by test_required_py_spec110_subscribe_same_subscriber_twice..."""

    @tck_test()
    def test_untested_spec213_blackbox_failing_on_signal_invocation(self) -> None:
        """raising signal methods fail the 2.9/2.10 tests"""

    @tck_test()
    def test_required_spec213_blackbox_on_subscribe_must_throw_type_error_when_parameters_are_none(self) -> None:
        self._none_must_raise(self._fresh_subscriber(subscribed=False), "on_subscribe")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec213_blackbox_on_next_must_throw_type_error_when_parameters_are_none(self) -> None:
        self._none_must_raise(self._fresh_subscriber(subscribed=True), "on_next")
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec213_blackbox_on_error_must_throw_type_error_when_parameters_are_none(self) -> None:
        self._none_must_raise(self._fresh_subscriber(subscribed=True), "on_error")
        self.env.verify_no_violations()

    @tck_test()
    def test_untested_spec301_blackbox_must_not_be_called_outside_subscriber_context(self) -> None:
        """'the context of its Subscriber' is not observable"""

    @tck_test()
    def test_untested_spec308_blackbox_request_must_register_given_number_elements_to_be_produced(self) -> None:
        """the kit cannot see what a blackbox Subscriber processed"""

    @tck_test()
    def test_untested_spec310_blackbox_request_may_synchronously_call_on_next_on_subscriber(self) -> None:
        """a MAY rule for Publishers"""

    @tck_test()
    def test_untested_spec311_blackbox_request_may_synchronously_call_on_complete_or_on_error(self) -> None:
        """a MAY rule for Publishers"""

    @tck_test()
    def test_untested_spec314_blackbox_cancel_may_cause_the_publisher_to_shutdown_if_no_other_subscription_exists(
        self,
    ) -> None:
        """a MAY rule"""

    @tck_test()
    def test_untested_spec315_blackbox_cancel_must_not_throw_exception_and_must_signal_on_error(self) -> None:
        """a Publisher rule; checked by PublisherVerification.test_required_py_spec315"""

    @tck_test()
    def test_untested_spec316_blackbox_request_must_not_throw_exception_and_must_on_error_the_subscriber(
        self,
    ) -> None:
        """a Publisher rule; checked by PublisherVerification.test_required_py_spec316"""

    # -- Python additions ----------------------------------------------------------------------------
    @tck_test()
    def test_required_py_spec201_blackbox_must_consume_an_asynchronous_helper_publisher(self) -> None:
        """Rule 2.1 with a real asynchronous Publisher (create_helper_publisher, signals on pool
        threads): the Subscriber requests, its signal methods return normally (2.13) and its calls on
        the Subscription stay serial (2.7) until the stream completes or the Subscriber stops asking."""
        try:
            sub = self.create_subscriber()
        except Exception as exc:  # noqa: BLE001
            fail(f"setup: create_subscriber() raised {type(exc).__name__}: {exc}")
        proxy = self._subscribe_to_helper(sub, 10)
        try:
            self.trigger_request(sub)
        except Exception as exc:  # noqa: BLE001
            fail(f"setup: trigger_request(subscriber) raised {type(exc).__name__}: {exc}")
        quiet = 2 * self.env.no_signals_timeout
        deadline = time.monotonic() + self.env.timeout * 5
        while not proxy.terminated.wait(self.env.poll_timeout):
            if time.monotonic() > deadline or time.monotonic() - proxy.last_signal > max(quiet, self.env.timeout):
                break
        watched = proxy.subscription
        if watched is None:
            fail(violation("1.9", "kit error: the helper publisher did not call on_subscribe"))
        if watched.requested == 0:
            fail(violation("2.1", "the Subscriber never requested from an asynchronous Publisher"))
        self.env.verify_no_violations()

    @tck_test()
    def test_required_py_spec207_blackbox_must_call_request_and_cancel_serially(self) -> None:
        """Rule 2.7 (JVM: untested): as the whitebox test, for a blackbox Subscriber."""
        stage = self._stage(trigger=True)
        stage.expect_request()
        stage.subscription.drain_requests()
        self._serial_calls(stage.publisher, 0)
        self.env.verify_no_violations()

