"""PublisherVerification: the Publisher rules (1.x) and the Subscription rules (3.x) it must obey."""

from __future__ import annotations

import gc
import logging
import random
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from .._internal import plugins
from .._spec import MAX_DEMAND, Publisher, Subscription, violation
from ._base import VerificationBase
from ._env import ManualSubscriber, ReceiveBufferOverflow
from ._outcomes import fail, skip, tck_test

__all__ = ["PublisherVerification"]

T = TypeVar("T")

_BAD_EXCEPTIONS = (TypeError, ValueError)


class PublisherVerification(VerificationBase, Generic[T]):
    """Verifies a Publisher against rules 1.1-1.11 and 3.1-3.17.

    Subclass it in a pytest module (the name must start with ``Test``) and say how to build the
    Publisher under test.

    Example::

        from rstreams.tck import PublisherVerification

        class TestMyRange(PublisherVerification):
            def create_publisher(self, n): return MyRange(0, n)
            def create_failed_publisher(self): return None

    ``create_publisher(n)`` must return a Publisher that emits exactly ``n`` elements and completes
    (``n == 2**63 - 1`` means "never completes"). ``create_failed_publisher()`` returns a Publisher
    that signals ``on_subscribe`` then ``on_error`` (or ``None``: two tests are then skipped).

    Knobs (override the methods / class attributes): :meth:`max_elements_from_publisher`,
    :meth:`bounded_depth_of_on_next_and_request_recursion`, :meth:`skip_stochastic_tests`,
    :attr:`stochastic_iterations`, and the timeouts of :class:`~rstreams.tck.TestEnvironment`.
    """

    __test__ = False

    #: iterations of the stochastic rule 1.3 test
    stochastic_iterations: int = 100

    # -- what the user provides ---------------------------------------------------------------------
    def create_publisher(self, elements: int) -> Publisher[T]:
        """Return a Publisher that emits exactly ``elements`` elements then completes."""
        raise NotImplementedError(f"{type(self).__name__} must implement create_publisher(n)")

    def create_failed_publisher(self) -> Publisher[T] | None:
        """Return a Publisher that signals on_subscribe then on_error, or ``None`` (skips 2 tests)."""
        return None

    # -- knobs ---------------------------------------------------------------------------------------
    def max_elements_from_publisher(self) -> int:
        """The largest stream the Publisher can produce; ``2**63 - 1`` means it never completes."""
        return MAX_DEMAND - 1

    def bounded_depth_of_on_next_and_request_recursion(self) -> int:
        """The allowed depth of synchronous ``on_next -> request -> on_next`` recursion (rule 3.3)."""
        return 1

    def skip_stochastic_tests(self) -> bool:
        return False

    # -- helpers -------------------------------------------------------------------------------------
    def _publisher(self, elements: int, completion_required: bool) -> Publisher[T]:
        limit = self.max_elements_from_publisher()
        if elements > limit:
            skip(
                f"needs a Publisher of {elements} elements but max_elements_from_publisher() = {limit}"
            )
        if completion_required and limit == MAX_DEMAND:
            skip("needs on_complete but max_elements_from_publisher() == 2**63 - 1 (the Publisher never completes)")
        try:
            pub = self.create_publisher(elements)
        except Exception as exc:  # noqa: BLE001
            fail(f"setup: create_publisher({elements}) raised {type(exc).__name__}: {exc}")
        if pub is None:
            fail(f"setup: create_publisher({elements}) returned None")
        return pub

    def _failed_publisher(self) -> Publisher[T]:
        pub = self.create_failed_publisher()
        if pub is None:
            skip("create_failed_publisher() returned None: the failed-publisher rules (1.4, 1.9) are not tested")
        return pub

    def _subscriber(self, **kwargs: Any) -> ManualSubscriber[T]:
        return ManualSubscriber(self.env, **kwargs)

    def _subscribe(self, pub: Publisher[T], sub: ManualSubscriber[T], rule: str = "1.9") -> None:
        try:
            pub.subscribe(sub)
        except Exception as exc:  # noqa: BLE001
            fail(
                violation(
                    rule,
                    f"subscribe() raised {type(exc).__name__}: {exc}; it must return normally and "
                    "signal failures with on_error after on_subscribe",
                )
            )

    def _subscribed(self, pub: Publisher[T], **kwargs: Any) -> ManualSubscriber[T]:
        sub = self._subscriber(**kwargs)
        self._subscribe(pub, sub)
        sub.subscription()
        return sub

    # =================================================================================================
    # setup and configuration

    @tck_test("setup")
    def test_required_create_publisher1_must_produce_a_stream_of_exactly1_element(self) -> None:
        pub = self._publisher(1, True)
        sub = self._subscribed(pub)
        msg = "create_publisher(1) must produce a stream of exactly 1 element then on_complete (rules 1.2, 1.5)"
        sub.request_next_element(violation("1.1", f"request(1) produced no element; {msg}"))
        sub.request_end_of_stream(violation("1.5", msg))
        sub.expect_none(violation("1.7", f"a signal after on_complete; {msg}"))
        self.env.verify_no_violations(delay=False)

    @tck_test("setup")
    def test_required_create_publisher3_must_produce_a_stream_of_exactly3_elements(self) -> None:
        pub = self._publisher(3, True)
        sub = self._subscribed(pub)
        msg = "create_publisher(3) must produce a stream of exactly 3 elements then on_complete (rules 1.2, 1.5)"
        for _ in range(3):
            sub.request_next_element(violation("1.1", f"request(1) produced no element; {msg}"))
        sub.request_end_of_stream(violation("1.5", msg))
        sub.expect_none(violation("1.7", f"a signal after on_complete; {msg}"))
        self.env.verify_no_violations(delay=False)

    @tck_test("config")
    def test_required_validate_max_elements_from_publisher(self) -> None:
        n = self.max_elements_from_publisher()
        if not isinstance(n, int) or n < 0:
            fail(f"config: max_elements_from_publisher() must be an int >= 0, got {n!r}")

    @tck_test("config")
    def test_required_validate_bounded_depth_of_on_next_and_request_recursion(self) -> None:
        n = self.bounded_depth_of_on_next_and_request_recursion()
        if not isinstance(n, int) or n < 1:
            fail(f"config: bounded_depth_of_on_next_and_request_recursion() must be an int >= 1, got {n!r}")

    # =================================================================================================
    # 1.x

    @tck_test()
    def test_required_spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements(
        self,
    ) -> None:
        pub = self._publisher(5, False)
        sub = self._subscribed(pub)
        sub.expect_none(violation("1.1", "the Publisher signalled before any request"))
        sub.request(1)
        sub.next_element(violation("1.1", "request(1) did not produce an element"))
        sub.expect_none(violation("1.1", "the Publisher signalled more than the 1 element requested"))
        sub.request(1)
        sub.request(2)
        sub.next_elements(3, violation("1.1", "request(1) + request(2) did not produce 3 elements"))
        sub.expect_none(violation("1.1", "the Publisher signalled more than the 4 elements requested"))
        sub.cancel()
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_spec102_may_signal_less_than_requested_and_terminate_subscription(self) -> None:
        pub = self._publisher(3, True)
        sub = self._subscribed(pub)
        sub.request(10)
        sub.next_elements(3, violation("1.2", "request(10) on a 3-element Publisher did not produce 3 elements"))
        sub.expect_completion(violation("1.2", "a 3-element Publisher asked for 10 must signal on_complete after 3"))
        sub.expect_none(violation("1.7", "a signal after on_complete"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_stochastic_spec103_must_signal_on_methods_sequentially(self) -> None:
        """As the JVM kit: ``stochastic_iterations`` runs of a 10-element stream, demand signalled only
        from within the signals (1 in on_subscribe, 1 more in each on_next, up to 11 in all), so the
        kit itself keeps its request calls serial (rule 2.7); overlapping signals from two threads
        are a rule 1.3 violation (same-thread re-entry is allowed)."""
        if self.skip_stochastic_tests():
            skip("skip_stochastic_tests() is True: the stochastic rule 1.3 test is skipped")
        elements = 10
        for _ in range(self.stochastic_iterations):
            pub = self._publisher(elements, True)

            def on_subscribe(sub: ManualSubscriber[T], s: Subscription) -> None:
                _quiet_request(sub, s, 1)

            def on_next(sub: ManualSubscriber[T], item: T) -> None:
                time.sleep(0)  # let another thread run: overlapping signals show up here
                s = sub._subscription.peek()
                if s is not None and sub.on_next_count <= elements:  # one more than the stream holds
                    _quiet_request(sub, s, 1)

            sub = self._subscribed(pub, on_subscribe_hook=on_subscribe, on_next_hook=on_next)
            sub.next_elements(elements, violation("1.3", f"expected {elements} elements"))
            sub.expect_completion(violation("1.5", f"expected on_complete after {elements} elements"))
            self.env.verify_no_violations(delay=False)

    @tck_test(optional_fails_hard=True)
    def test_optional_spec104_must_signal_on_error_when_fails(self) -> None:
        """Skipped when create_failed_publisher() returns None; otherwise, as in the JVM kit, a failed
        Publisher that raises from subscribe(), or does not signal on_subscribe then one on_error,
        FAILS this test (it is not turned into an xfail)."""
        pub = self._failed_publisher()
        sub = self._subscriber()
        self._subscribe(pub, sub, "1.4")
        sub.subscription()
        sub.expect_error((BaseException,), violation("1.4", "the failed Publisher did not signal on_error"))
        sub.expect_none(violation("1.7", "a signal after on_error"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_spec105_must_signal_on_complete_when_finite_stream_terminates(self) -> None:
        pub = self._publisher(3, True)
        sub = self._subscribed(pub)
        for _ in range(3):
            sub.request_next_element(violation("1.5", "request(1) did not produce an element"))
        sub.request_end_of_stream(violation("1.5", "the finite stream of 3 elements did not signal on_complete"))
        sub.expect_none(violation("1.7", "a signal after on_complete"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_optional_spec105_empty_stream_must_terminate_by_signalling_on_complete(self) -> None:
        pub = self._publisher(0, True)
        sub = self._subscribed(pub)
        sub.request(1)
        sub.expect_completion(violation("1.5", "an empty stream must signal on_complete"))
        sub.expect_none(violation("1.7", "a signal after on_complete"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_untested_spec106_must_consider_subscription_cancelled_after_on_error_or_on_complete_has_been_called(
        self,
    ) -> None:
        """test_required_py_spec106_must_consider_subscription_cancelled_after_on_complete"""

    @tck_test()
    def test_required_spec107_must_not_emit_further_signals_once_on_complete_has_been_signalled(self) -> None:
        pub = self._publisher(1, True)
        sub = self._subscribed(pub)
        sub.request(10)
        sub.next_element(violation("1.7", "request(10) on a 1-element Publisher did not produce its element"))
        sub.expect_completion(violation("1.5", "a 1-element Publisher asked for 10 must signal on_complete"))
        sub.request(10)
        sub.expect_none(violation("1.7", "a signal after on_complete"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_untested_spec107_must_not_emit_further_signals_once_on_error_has_been_signalled(self) -> None:
        """test_required_py_spec107_must_not_emit_further_signals_once_on_error_has_been_signalled"""

    @tck_test()
    def test_untested_spec108_possibly_canceled_subscription_should_not_receive_on_error_or_on_complete_signals(
        self,
    ) -> None:
        """covered in practice by test_required_spec312 (rule 1.8 via 3.12)"""

    @tck_test()
    def test_untested_spec109_subscribe_should_not_throw_non_fatal_throwable(self) -> None:
        """every test checks that subscribe() returns normally"""

    @tck_test()
    def test_required_spec109_subscribe_throw_type_error_on_none_subscriber(self) -> None:
        pub = self._publisher(0, False)
        try:
            pub.subscribe(None)  # type: ignore[arg-type]
        except TypeError:
            return
        except Exception as exc:  # noqa: BLE001
            fail(violation("1.9", f"subscribe(None) must raise TypeError, but raised {type(exc).__name__}: {exc}"))
        fail(violation("1.9", "subscribe(None) returned normally; it must raise TypeError"))

    @tck_test()
    def test_required_spec109_must_issue_on_subscribe_for_non_none_subscriber(self) -> None:
        pub = self._publisher(0, False)
        sub = self._subscriber()
        self._subscribe(pub, sub)
        sub.subscription()
        self.env.verify_no_violations()

    @tck_test()
    def test_required_spec109_may_reject_calls_to_subscribe_if_publisher_is_unable_or_unwilling_to_serve_them_rejection_must_trigger_on_error_after_on_subscribe(  # noqa: E501
        self,
    ) -> None:
        pub = self._failed_publisher()
        sub = self._subscriber()
        self._subscribe(pub, sub)
        sub.subscription()
        sub.expect_error(
            (BaseException,), violation("1.9", "the failed Publisher must signal on_error after on_subscribe")
        )
        sub.expect_none(violation("1.7", "a signal after on_error"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_untested_spec110_reject_a_subscription_request_if_the_same_subscriber_subscribes_twice(self) -> None:
        """test_required_py_spec110_subscribe_same_subscriber_twice_must_return_normally"""

    @tck_test()
    def test_optional_spec111_may_support_multi_subscribe(self) -> None:
        pub = self._publisher(1, False)
        subs = [self._subscribed(pub, name=f"subscriber {i}") for i in (1, 2)]
        time.sleep(self.env.no_signals_timeout)
        for s in subs:
            for kind, value in s.received.peek_all():
                if kind == "error":
                    fail(violation("1.11", f"{s.name} got on_error({value!r}): multiple Subscribers not supported"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_optional_spec111_registered_subscribers_must_receive_on_next_or_on_complete_signals(self) -> None:
        pub = self._publisher(1, False)
        subs = [self._subscribed(pub, name=f"subscriber {i}") for i in (1, 2)]
        for s in subs:
            s.request(1)
        for s in subs:
            got = s.received.poll(self.env.timeout)
            if got is None or got[0] not in ("next", "complete"):
                fail(violation("1.11", f"{s.name} did not receive on_next or on_complete after request(1): {got!r}"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_one_by_one(  # noqa: E501
        self,
    ) -> None:
        """The JVM kit's choreography: the three Subscribers request at different paces (the third
        one reaches the end while the first has 2 elements), so a Publisher that emits only when
        every Subscriber has demand does not implement this."""
        pub = self._publisher(5, True)
        sub1, sub2, sub3 = (self._subscribed(pub, name=f"subscriber {i}") for i in (1, 2, 3))

        def take(s: ManualSubscriber[T], n: int) -> list[T]:
            s.request(n)
            return s.next_elements(n, violation("1.11", f"{s.name} did not receive the {n} element(s) it requested"))

        def end(s: ManualSubscriber[T]) -> None:
            s.request_end_of_stream(violation("1.11", f"{s.name} did not receive on_complete after 5 elements"))

        x = take(sub1, 1)
        y = take(sub2, 2)
        x += take(sub1, 1)
        z = take(sub3, 3)
        z += take(sub3, 1)
        z += take(sub3, 1)
        end(sub3)
        y += take(sub2, 3)
        end(sub2)
        x += take(sub1, 2)
        x += take(sub1, 1)
        end(sub1)
        if x != y or x != z:
            fail(violation("1.11", f"multicast Subscribers received different sequences: {[x, y, z]}"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront(  # noqa: E501
        self,
    ) -> None:
        pub = self._publisher(3, False)
        subs = [self._subscribed(pub, name=f"subscriber {i}") for i in (1, 2, 3)]
        for s in subs:
            s.request(4)
        seqs = [s.next_elements(3, violation("1.11", f"{s.name} did not receive 3 elements")) for s in subs]
        if seqs[0] != seqs[1] or seqs[0] != seqs[2]:
            fail(violation("1.11", f"multicast Subscribers received different sequences: {seqs}"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront_and_complete_as_expected(  # noqa: E501
        self,
    ) -> None:
        pub = self._publisher(3, True)
        subs = [self._subscribed(pub, name=f"subscriber {i}") for i in (1, 2, 3)]
        for s in subs:
            s.request(4)
        seqs = [s.next_elements(3, violation("1.11", f"{s.name} did not receive 3 elements")) for s in subs]
        if seqs[0] != seqs[1] or seqs[0] != seqs[2]:
            fail(violation("1.11", f"multicast Subscribers received different sequences: {seqs}"))
        for s in subs:
            s.expect_completion(violation("1.11", f"{s.name} did not receive on_complete"))
        self.env.verify_no_violations(delay=False)

    # =================================================================================================
    # 3.x

    @tck_test()
    def test_required_spec302_must_allow_synchronous_request_calls_from_on_next_and_on_subscribe(self) -> None:
        """As the JVM kit: request(1) three times from on_subscribe and once from each on_next of a
        6-element stream. The on_next requests stop after the 6th element (a Publisher that never
        completes, max_elements_from_publisher() == 2**63 - 1, then emits 9 and waits)."""
        pub = self._publisher(6, False)

        def on_subscribe(sub: ManualSubscriber[T], s: Subscription) -> None:
            for _ in range(3):
                _quiet_request(sub, s, 1, "3.2")

        def on_next(sub: ManualSubscriber[T], item: T) -> None:
            s = sub._subscription.peek()
            if s is not None and sub.on_next_count <= 6:
                _quiet_request(sub, s, 1, "3.2")

        sub = self._subscribed(pub, on_subscribe_hook=on_subscribe, on_next_hook=on_next)
        sub.next_elements(6, violation("3.2", "requests made from on_subscribe and on_next did not produce 6 elements"))
        self.env.verify_no_violations()
        sub.cancel()

    @tck_test()
    def test_required_spec303_must_not_allow_unbounded_recursion(self) -> None:
        """As the JVM kit: a stream of bound + 1 elements, request(1) from each on_next; the per-thread
        on_next depth must stay <= bounded_depth_of_on_next_and_request_recursion(). Elements are not
        buffered (a large bound must not overflow the kit's receive buffer)."""
        bound = self.bounded_depth_of_on_next_and_request_recursion()
        elements = bound + 1
        pub = self._publisher(elements, False)

        def on_next(sub: ManualSubscriber[T], item: T) -> None:
            s = sub._subscription.peek()
            # stop the chain once the bound is exceeded (an unbounded recursion) or every element came
            if s is not None and sub.max_depth <= bound and sub.on_next_count < elements:
                _quiet_request(sub, s, 1, "3.3")

        sub = self._subscribed(pub, on_next_hook=on_next, record=False)
        sub.request(1)
        deadline = time.monotonic() + self.env.timeout
        while (
            sub.on_next_count < elements
            and sub.max_depth <= bound
            and sub.terminated is None
            and time.monotonic() < deadline
        ):
            time.sleep(self.env.poll_timeout)
        if sub.max_depth > bound:
            fail(
                violation(
                    "3.3",
                    f"on_next -> request -> on_next recursion reached depth {sub.max_depth}, above the bound "
                    f"{bound} (bounded_depth_of_on_next_and_request_recursion())",
                )
            )
        if sub.errors:
            e = sub.errors[0]
            fail(violation("3.3", f"on_error({type(e).__name__}: {e}) during the request -> on_next recursion"))
        if sub.on_next_count < elements and sub.terminated is None:
            fail(
                violation(
                    "3.3",
                    f"request(1) from on_next produced {sub.on_next_count} of {elements} elements within "
                    f"{self.env.timeout_ms} ms: unable to validate the recursion depth",
                )
            )
        sub.cancel()
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_untested_spec304_request_should_not_perform_heavy_computations(self) -> None:
        """a SHOULD rule about cost, not observable"""

    @tck_test()
    def test_untested_spec305_cancel_must_not_synchronously_perform_heavy_computation(self) -> None:
        """test_required_py_spec305_cancel_must_be_thread_safe_and_idempotent"""

    @tck_test()
    def test_required_spec306_after_subscription_is_cancelled_request_must_be_nops(self) -> None:
        pub = self._publisher(3, False)
        sub = self._subscribed(pub)
        sub.cancel()
        for _ in range(3):
            sub.request(1)
        sub.expect_none(violation("3.6", "request after cancel produced a signal"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_spec307_after_subscription_is_cancelled_additional_cancelations_must_be_nops(self) -> None:
        pub = self._publisher(1, False)
        sub = self._subscribed(pub)
        s = sub.subscription()
        for i in range(3):
            try:
                s.cancel()
            except Exception as exc:  # noqa: BLE001
                fail(violation("3.7", f"cancel() number {i + 1} raised {type(exc).__name__}: {exc}"))
        sub.expect_none(violation("3.7", "cancel after cancel produced a signal"))
        self.env.verify_no_violations(delay=False)

    def _bad_request(self, n: Any, types: tuple[type[BaseException], ...], rule_detail: str) -> BaseException:
        pub = self._publisher(10, False)
        sub = self._subscribed(pub)
        s = sub.subscription()
        try:
            s.request(n)
        except Exception as exc:  # noqa: BLE001
            fail(
                violation(
                    "3.9",
                    f"request({n!r}) raised {type(exc).__name__}: {exc}; it must return normally and "
                    f"signal on_error({rule_detail}) (rule 3.16)",
                )
            )
        err = sub.expect_error(types, violation("3.9", f"request({n!r}) must signal on_error({rule_detail})"))
        sub.expect_none(violation("1.7", f"a signal after the on_error for request({n!r})"))
        self.env.verify_no_violations(delay=False)
        return err

    @tck_test()
    def test_required_spec309_request_zero_must_signal_value_error(self) -> None:
        self._bad_request(0, (ValueError,), "ValueError")

    @tck_test()
    def test_required_spec309_request_negative_number_must_signal_value_error(self) -> None:
        self._bad_request(-random.randint(1, MAX_DEMAND), (ValueError,), "ValueError")

    @tck_test()
    def test_optional_spec309_request_negative_number_may_signal_value_error_with_specific_message(self) -> None:
        err = self._bad_request(-1, (ValueError,), "ValueError")
        text = str(err).lower()
        if not any(k in text for k in ("3.9", "non-positive subscription request", "negative subscription request")):
            fail(
                violation(
                    "3.9",
                    f"the message {str(err)!r} does not name rule 3.9 nor say 'non-positive subscription request'",
                )
            )

    @tck_test()
    def test_required_spec312_cancel_must_make_the_publisher_to_eventually_stop_signaling(self) -> None:
        pub = self._publisher(20, False)
        sub = self._subscribed(pub)
        sub.request(10)
        sub.request(5)
        sub.next_element(violation("3.12", "request(15) did not produce an element"))
        sub.cancel()
        # As the JVM kit: elements already on their way may still arrive after cancel; keep waiting
        # while they do (each wait ends when no_signals_timeout passes without one). The Publisher must
        # stop eventually and never exceed the 15 requested; the loop ends after at most 15 waits.
        while True:
            before = sub.received.total_next
            time.sleep(self.env.no_signals_timeout)
            total = sub.received.total_next
            if total > 15:
                fail(violation("3.12", f"{total} elements were signalled but only 15 were requested before cancel"))
            if total == before:
                break
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_spec313_cancel_must_make_the_publisher_eventually_drop_all_references_to_the_subscriber(
        self,
    ) -> None:
        pub = self._publisher(3, False)
        ref = self._spec313_cancelled_subscriber(pub)
        # the JVM kit sleeps the GC timeout, collects, then waits 100 ms more for the reference to clear
        deadline = time.monotonic() + self.env.gc_timeout + 0.1
        while True:
            if _collected(ref):
                break
            if time.monotonic() >= deadline:
                referrers = [type(r).__name__ for r in gc.get_referrers(ref()) if r is not ref][:5]
                fail(
                    violation(
                        "3.13",
                        f"the Publisher still references the Subscriber {self.env.gc_timeout_ms + 100} ms after "
                        f"cancel (referenced by: {', '.join(referrers) or '?'})",
                    )
                )
            time.sleep(self.env.poll_timeout)
        self.env.verify_no_violations(delay=False)

    def _spec313_cancelled_subscriber(self, pub: Publisher[T]) -> weakref.ref[ManualSubscriber[T]]:
        sub = self._subscribed(pub)
        sub.request(1)
        sub.next_element(violation("3.13", "request(1) did not produce an element"))
        sub.cancel()
        sub.release_subscription()
        sub.received.clear()
        return weakref.ref(sub)

    @tck_test()
    def test_required_spec317_must_support_a_pending_element_count_up_to_long_max_value(self) -> None:
        pub = self._publisher(3, True)
        sub = self._subscribed(pub)
        sub.request(MAX_DEMAND)
        sub.next_elements(3, violation("3.17", "request(2**63 - 1) did not produce the 3 elements"))
        sub.expect_completion(violation("3.17", "request(2**63 - 1) on a 3-element stream must end in on_complete"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_spec317_must_support_a_cumulative_pending_element_count_up_to_long_max_value(self) -> None:
        pub = self._publisher(3, True)
        sub = self._subscribed(pub)
        half = MAX_DEMAND // 2
        sub.request(half)
        sub.request(half)
        sub.request(1)
        sub.next_elements(3, violation("3.17", "a cumulative demand of 2**63 - 1 did not produce the 3 elements"))
        sub.expect_completion(violation("3.17", "a cumulative demand of 2**63 - 1 must end in on_complete"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_spec317_must_not_signal_on_error_when_pending_above_long_max_value(self) -> None:
        pub = self._publisher(2**31 - 1, False)
        calls = [0]

        def on_next(sub: ManualSubscriber[T], item: T) -> None:
            s = sub._subscription.peek()
            if s is None:
                return
            calls[0] += 1
            if calls[0] <= 10:
                _quiet_request(sub, s, MAX_DEMAND - 1, "3.17")
            elif calls[0] == 11:
                try:
                    s.cancel()
                except Exception as exc:  # noqa: BLE001
                    sub.env.flop(violation("3.15", f"cancel() raised {type(exc).__name__}: {exc}"))

        sub = self._subscribed(pub, on_next_hook=on_next, record=False)
        sub.request(1)  # as the JVM kit; each of the first 10 on_next then requests 2**63 - 2 more
        # generous: only a Publisher that stalls after the demand overflow waits for the whole deadline
        deadline = time.monotonic() + 10 * self.env.timeout
        while calls[0] < 11 and not sub.errors and time.monotonic() < deadline:
            time.sleep(self.env.poll_timeout)
        time.sleep(self.env.no_signals_timeout)
        if sub.errors:
            e = sub.errors[0]
            fail(
                violation(
                    "3.17",
                    f"on_error({type(e).__name__}: {e}) was signalled for a demand above 2**63 - 1; "
                    "such demand must be treated as effectively unbounded",
                )
            )
        if calls[0] < 11:
            fail(
                violation(
                    "3.17",
                    f"only {calls[0]} elements were signalled within {10 * self.env.timeout_ms} ms for a demand "
                    "above 2**63 - 1, which must be treated as effectively unbounded",
                )
            )
        sub.cancel()
        self.env.verify_no_violations(delay=False)

    # =================================================================================================
    # Python additions: untested JVM items turned into checks, and Python's own bad demand

    @tck_test()
    def test_required_py_spec106_must_consider_subscription_cancelled_after_on_complete(self) -> None:
        """Rule 1.6 (JVM: untested): after on_complete, request/cancel/request(0) return normally and signal nothing."""
        pub = self._publisher(3, True)
        sub = self._subscribed(pub)
        sub.request(10)
        sub.next_elements(3, violation("1.6", "request(10) did not produce the 3 elements"))
        sub.expect_completion(violation("1.5", "the 3-element stream did not complete"))
        s = sub.subscription()
        for call, arg in (("request", 1), ("cancel", None), ("request", 5), ("cancel", None), ("request", 0)):
            try:
                if call == "request":
                    s.request(arg)  # type: ignore[arg-type]
                else:
                    s.cancel()
            except Exception as exc:  # noqa: BLE001
                fail(
                    violation(
                        "1.6",
                        f"{call}({'' if arg is None else arg}) after on_complete raised {type(exc).__name__}: "
                        f"{exc}; the Subscription must be considered cancelled (no-op, rules 3.6/3.7)",
                    )
                )
        sub.expect_none(violation("1.6", "a signal after on_complete, for a Subscription that must be cancelled"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_py_spec107_must_not_emit_further_signals_once_on_error_has_been_signalled(self) -> None:
        """Rule 1.7 after on_error (JVM: untested): provoke on_error with request(0) (and with the failed
        Publisher, if any), then request more: nothing may follow."""
        # an error the kit can always provoke: request(0) (rule 3.9)
        pub = self._publisher(10, False)
        sub = self._subscribed(pub)
        sub.request(0)
        sub.expect_error((ValueError,), violation("3.9", "request(0) must signal on_error(ValueError)"))
        sub.request(10)
        try:
            sub.subscription().cancel()
        except Exception as exc:  # noqa: BLE001
            fail(violation("1.6", f"cancel() after on_error raised {type(exc).__name__}: {exc}"))
        sub.expect_none(violation("1.7", "a signal after on_error"))
        failed = self.create_failed_publisher()
        if failed is not None:
            fsub = self._subscriber(name="failed-publisher subscriber")
            self._subscribe(failed, fsub)
            fsub.subscription()
            fsub.expect_error((BaseException,), violation("1.4", "the failed Publisher did not signal on_error"))
            fsub.request(10)
            fsub.expect_none(violation("1.7", "a signal from the failed Publisher after on_error"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_py_spec110_subscribe_same_subscriber_twice_must_return_normally(self) -> None:
        """Rule 1.10 (JVM: untested): subscribing the same Subscriber twice is the caller's bug, but subscribe()
        must still return normally (1.9) and the signals must stay serial and well-formed."""
        pub = self._publisher(3, False)
        sub = self._subscriber(allow_second_on_subscribe=True)
        self._subscribe(pub, sub, "1.10")
        self._subscribe(pub, sub, "1.10")
        sub.subscription()
        time.sleep(self.env.no_signals_timeout)
        if sub.on_subscribe_count > 2:
            fail(violation("1.10", f"two subscribe() calls produced {sub.on_subscribe_count} on_subscribe signals"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_optional_py_spec110_reject_same_subscriber_subscribing_twice(self) -> None:
        """Rule 1.10: OPTIONAL rejection of the second subscribe with on_error(RuntimeError), e.g.
        ProtocolViolationError (the reference publishers signal it on the existing Subscription)."""
        pub = self._publisher(3, False)
        sub = self._subscriber(allow_second_on_subscribe=True)
        self._subscribe(pub, sub, "1.10")
        self._subscribe(pub, sub, "1.10")
        sub.expect_error(
            (RuntimeError,),
            violation("1.10", "subscribing the same Subscriber twice was not rejected with on_error(RuntimeError)"),
        )
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_py_spec213_must_consider_subscription_cancelled_and_report_error_if_on_next_raises(
        self,
    ) -> None:
        """Rule 2.13 (JVM: untested): a Subscriber whose on_next raises.

        Required: the error must not escape from request() (3.16); no further on_next and no on_complete
        (the Subscription is considered cancelled); and the error must be reported through one of:
        the ``rstreams.plugins`` undeliverable-error hook (what rstreams itself does), a ``logging``
        record at WARNING or above (any propagating logger, with the error as exc_info or its text in
        the message), ``threading.excepthook``/``sys.unraisablehook``, or an on_error carrying it
        (or chaining it) to that Subscriber. Silently swallowing the error fails."""
        pub = self._publisher(10, False)
        boom = RuntimeError("rstreams.tck: deliberate failure in on_next (rule 2.13 test)")

        def on_next(sub: ManualSubscriber[T], item: T) -> None:
            if sub.on_next_count == 1:
                raise boom

        with _ErrorReports(boom) as reports:
            sub = self._subscribed(pub, on_next_hook=on_next)
            s = sub.subscription()
            try:
                s.request(5)
            except Exception as exc:  # noqa: BLE001
                fail(
                    violation(
                        "2.13",
                        f"request() raised {type(exc).__name__}: {exc}: the error raised by the Subscriber must "
                        f"not escape to the caller of request (3.16); {_HOW_TO_COMPLY_213}",
                    )
                )
            deadline = time.monotonic() + self.env.timeout
            while not reports.found(sub.errors) and time.monotonic() < deadline:
                time.sleep(self.env.poll_timeout)
            try:
                s.request(5)
            except Exception as exc:  # noqa: BLE001
                fail(violation("3.16", f"request() after the Subscriber raised: {type(exc).__name__}: {exc}"))
            time.sleep(self.env.no_signals_timeout)
            reported = reports.found(sub.errors)
        if sub.on_next_count != 1:
            fail(
                violation(
                    "2.13",
                    f"{sub.on_next_count} on_next signals: after on_next raised, the Subscription must be "
                    f"considered cancelled (no further on_next); {_HOW_TO_COMPLY_213}",
                )
            )
        if sub.terminated == "on_complete":
            fail(
                violation(
                    "2.13",
                    "on_complete after on_next raised: the Subscription must be considered cancelled; "
                    + _HOW_TO_COMPLY_213,
                )
            )
        if not reported:
            fail(
                violation(
                    "2.13",
                    "the error raised by on_next was swallowed (neither rstreams.plugins, logging, "
                    f"threading.excepthook nor on_error saw it); {_HOW_TO_COMPLY_213}",
                )
            )
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_py_spec305_cancel_must_be_thread_safe_and_idempotent(self) -> None:
        """Rule 3.5 (JVM: untested): 8 threads call cancel() 3 times each at the same moment: all return
        normally and in time, and later requests produce nothing (3.6)."""
        pub = self._publisher(100, False)
        sub = self._subscribed(pub)
        sub.request(1)
        sub.next_element(violation("3.5", "request(1) did not produce an element"))
        s = sub.subscription()
        threads = 8
        barrier = threading.Barrier(threads)
        errors: list[BaseException] = []

        def cancel_many() -> None:
            try:
                barrier.wait(self.env.timeout)
            except threading.BrokenBarrierError:
                return
            for _ in range(3):
                try:
                    s.cancel()
                except Exception as exc:  # noqa: BLE001
                    errors.append(exc)

        workers = [self.env.start_thread(cancel_many, f"rstreams-tck-cancel-{i}") for i in range(threads)]
        deadline = time.monotonic() + self.env.timeout * 5
        for w in workers:
            w.join(max(0.0, deadline - time.monotonic()))
        if any(w.is_alive() for w in workers):
            fail(violation("3.5", f"cancel() called from {threads} threads at once did not return in time"))
        if errors:
            e = errors[0]
            fail(violation("3.5", f"cancel() called from {threads} threads at once raised {type(e).__name__}: {e}"))
        sub.request(5)
        sub.expect_none(violation("3.6", "request after a concurrent cancel produced a signal"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_py_spec315_cancel_must_return_normally(self) -> None:
        """Rule 3.15 (JVM: untested): cancel() before any request, after on_complete, and twice, returns normally."""
        pub = self._publisher(1, True)
        before = self._subscribed(pub, name="subscriber cancelling before any request")
        try:
            before.subscription().cancel()
        except Exception as exc:  # noqa: BLE001
            fail(violation("3.15", f"cancel() before any request raised {type(exc).__name__}: {exc}"))
        pub2 = self._publisher(1, True)  # a fresh Publisher: hot Publishers (Processors) need not replay
        after = self._subscribed(pub2, name="subscriber cancelling after on_complete")
        after.request(2)
        after.next_element(violation("1.1", "request(2) did not produce the element"))
        after.expect_completion(violation("1.5", "a 1-element stream asked for 2 did not complete"))
        for when in ("after on_complete", "again"):
            try:
                after.subscription().cancel()
            except Exception as exc:  # noqa: BLE001
                fail(violation("3.15", f"cancel() {when} raised {type(exc).__name__}: {exc}"))
        before.expect_none(violation("3.12", "a signal after cancel"))
        after.expect_none(violation("1.7", "a signal after on_complete"), timeout=0)
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_py_spec316_request_must_return_normally(self) -> None:
        """Rule 3.16 (JVM: untested): request() returns normally, also after on_complete and cancel, for any n."""
        pub = self._publisher(1, True)
        sub = self._subscribed(pub)
        s = sub.subscription()
        for label, n in (("request(1)", 1), ("request(1) after the last element", 1), ("request(3)", 3)):
            try:
                s.request(n)
            except Exception as exc:  # noqa: BLE001
                fail(violation("3.16", f"{label} raised {type(exc).__name__}: {exc}"))
        sub.next_element(violation("1.1", "request(1) did not produce the element"))
        sub.expect_completion(violation("1.5", "a 1-element stream did not complete"))
        s.cancel()
        for n in (1, 2**63, -1):
            try:
                s.request(n)
            except Exception as exc:  # noqa: BLE001
                fail(violation("3.16", f"request({n}) after on_complete and cancel raised {type(exc).__name__}: {exc}"))
        sub.expect_none(violation("1.7", "a signal after on_complete"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_py_spec317_request_above_long_max_value_must_mean_unbounded(self) -> None:
        """Rule 3.17 for Python ints: request(2**64) and demand summing above 2**63 - 1 mean 'unbounded'."""
        pub = self._publisher(3, True)
        sub = self._subscribed(pub, name="subscriber requesting 2**64")
        sub.request(2**64)
        sub.next_elements(3, violation("3.17", "request(2**64) did not produce the 3 elements"))
        sub.expect_completion(violation("3.17", "request(2**64) on a 3-element stream must end in on_complete"))
        pub2 = self._publisher(3, True)  # a fresh Publisher: hot Publishers (Processors) need not replay
        sub2 = self._subscribed(pub2, name="subscriber requesting 2**63 - 1, then 2**64 and 2**100")
        sub2.request(MAX_DEMAND)
        sub2.request(2**64)
        sub2.request(2**100)
        sub2.next_elements(3, violation("3.17", "unbounded demand (2**63 - 1 + 2**64 + 2**100) did not produce 3"))
        sub2.expect_completion(violation("3.17", "unbounded demand must end in on_complete, not on_error"))
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_required_py_spec309_request_bool_must_signal_error(self) -> None:
        """Rule 3.9 for Python: request(True) is not a count: on_error(TypeError or ValueError), nothing else."""
        self._bad_request(True, _BAD_EXCEPTIONS, "TypeError or ValueError")

    @tck_test()
    def test_required_py_spec309_request_float_must_signal_error(self) -> None:
        """Rule 3.9 for Python: request(1.5): on_error(TypeError or ValueError), never an exception from request."""
        self._bad_request(1.5, _BAD_EXCEPTIONS, "TypeError or ValueError")

    @tck_test()
    def test_required_py_spec309_request_none_must_signal_error(self) -> None:
        """Rule 3.9 for Python: request(None): on_error(TypeError or ValueError), never an exception from request."""
        self._bad_request(None, _BAD_EXCEPTIONS, "TypeError or ValueError")

    @tck_test()
    def test_optional_py_spec310_request_may_synchronously_call_on_next(self) -> None:
        """Rule 3.10 (MAY): reports whether request() calls on_next synchronously; passes either way."""
        pub = self._publisher(1, False)
        me = threading.get_ident()
        threads: list[int] = []

        def on_next(sub: ManualSubscriber[T], item: T) -> None:
            threads.append(threading.get_ident())

        sub = self._subscribed(pub, on_next_hook=on_next)
        sub.request(1)
        synchronous = bool(threads) and threads[0] == me
        sub.next_element(violation("1.1", "request(1) did not produce an element"))
        self.env.observe(
            "rule 3.10 (MAY): request(1) "
            + ("called on_next synchronously, on the calling thread" if synchronous else "did not call on_next synchronously")
        )
        sub.cancel()
        self.env.verify_no_violations(delay=False)

    @tck_test()
    def test_optional_py_spec311_request_may_synchronously_call_on_complete(self) -> None:
        """Rule 3.11 (MAY): reports whether request() calls on_complete synchronously; passes either way."""
        pub = self._publisher(1, True)
        sub = self._subscribed(pub)
        sub.request(2)
        synchronous = sub.terminated is not None
        sub.next_element(violation("1.1", "request(2) did not produce the element"))
        sub.expect_completion(violation("1.5", "a 1-element stream asked for 2 did not complete"))
        self.env.observe(
            "rule 3.11 (MAY): request(2) on a 1-element stream "
            + ("called on_complete synchronously" if synchronous else "did not call on_complete synchronously")
        )
        self.env.verify_no_violations(delay=False)


def _quiet_request(sub: ManualSubscriber[Any], s: Subscription, n: int, rule: str = "3.16") -> None:
    """``s.request(n)`` from inside a signal: record (never raise) a failure."""
    try:
        s.request(n)
    except ReceiveBufferOverflow:
        raise  # already recorded (rule 1.1); it must unwind a synchronous Publisher that ignores demand
    except Exception as exc:  # noqa: BLE001
        sub.env.flop(violation(rule, f"request({n}) called from within a signal raised {type(exc).__name__}: {exc}"))


#: How a Publisher complies with the Python-only rule 2.13 check (the JVM kit leaves the rule untested).
_HOW_TO_COMPLY_213 = (
    "to comply, wrap each call to the Subscriber's on_next in try/except, and on an exception cancel the "
    "Subscription (stop emitting, release the Subscriber, no on_complete) and report the error: "
    "rstreams.plugins.on_error(error, context) (rstreams' undeliverable-error hook, logged at ERROR by "
    "default), or logging.getLogger(__name__).error(..., exc_info=error) (WARNING or above)"
)


class _ErrorReports:
    """Collects the channels a Publisher may use to report a Subscriber's error (rule 2.13)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self._seen: list[BaseException] = []
        self._messages: list[str] = []
        self._lock = threading.Lock()
        self._stack: list[Callable[[], None]] = []

    def _add(self, exc: BaseException | None, message: str = "") -> None:
        with self._lock:
            if exc is not None:
                self._seen.append(exc)
            if message:
                self._messages.append(message)

    def found(self, delivered: list[BaseException]) -> bool:
        for e in list(delivered) + self._snapshot():
            if _chain_contains(e, self.error):
                return True
        text = str(self.error)
        with self._lock:
            return any(text in m for m in self._messages)

    def _snapshot(self) -> list[BaseException]:
        with self._lock:
            return list(self._seen)

    def __enter__(self) -> _ErrorReports:
        # 1. the rstreams.plugins hook
        previous = plugins.get_error_handler()
        plugins.set_error_handler(lambda e: self._add(e))
        self._stack.append(lambda: plugins.set_error_handler(previous))
        # 2. logging (root logger: records of every propagating logger)
        reports = self

        class _Handler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if record.levelno >= logging.WARNING:
                    exc = record.exc_info[1] if record.exc_info else None
                    try:
                        msg = record.getMessage()
                    except Exception:  # noqa: BLE001
                        msg = str(record.msg)
                    reports._add(exc, msg)

        handler = _Handler()
        root = logging.getLogger()
        root.addHandler(handler)
        self._stack.append(lambda: root.removeHandler(handler))
        # 3. threading.excepthook and sys.unraisablehook
        old_thread_hook = threading.excepthook
        threading.excepthook = lambda args: self._add(args.exc_value)
        self._stack.append(lambda: setattr(threading, "excepthook", old_thread_hook))
        old_unraisable = sys.unraisablehook
        sys.unraisablehook = lambda u: self._add(u.exc_value)
        self._stack.append(lambda: setattr(sys, "unraisablehook", old_unraisable))
        return self

    def __exit__(self, *exc: object) -> None:
        while self._stack:
            self._stack.pop()()


def _chain_contains(exc: BaseException | None, target: BaseException) -> bool:
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        if e is target:
            return True
        seen.add(id(e))
        todo.extend([e.__cause__, e.__context__, getattr(e, "cause", None)])
        if isinstance(e, BaseExceptionGroup):
            todo.extend(e.exceptions)
    return False


def _collected(ref: weakref.ref[Any]) -> bool:
    """Whether the object behind ``ref`` is gone, collecting the youngest generations first.

    A Subscriber the Publisher dropped is usually freed by its reference count alone, or sits in a
    cycle of objects made during the test (the young generations); a full collection walks the whole
    heap of the process running the kit (hundreds of milliseconds in a large test run), so it comes
    last. The verdict is the same as after one full ``gc.collect()``.
    """
    if ref() is None:
        return True
    for generation in (0, 1, 2):
        gc.collect(generation)
        if ref() is None:
            return True
    return False
