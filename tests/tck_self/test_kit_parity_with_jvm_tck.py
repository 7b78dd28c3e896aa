"""The kit compared test by test with the JVM TCK (1.0.4): each case is a gap that was found.

For each gap: an implementation the JVM kit passes must pass ours (nothing too strict or racy), and
one the JVM kit fails must fail the same-named test with a message naming the rule.
"""

from __future__ import annotations

import time
from typing import Any

from jvm_parity_impls import (
    DemandCheckingSubscriber,
    DemandIgnoringSyncPublisher,
    MulticastProcessor,
    NudgedSubscriber,
    ThreadedRangePublisher,
)
from tck_broken import BrokenRange, BrokenSubscriber
from tck_helpers import require_failure, require_optional_failure, require_pass, verification

from rstreams.tck import IdentityProcessor, SubscriberBlackboxVerification, SyncRangePublisher
from rstreams.tck._base import VerificationBase, kit_tests
from rstreams.tck._runner import run_test

P = "test_required_"
S101 = P + "spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements"
S102 = P + "spec102_may_signal_less_than_requested_and_terminate_subscription"
S103 = "test_stochastic_spec103_must_signal_on_methods_sequentially"
S303 = P + "spec303_must_not_allow_unbounded_recursion"
S312 = P + "spec312_cancel_must_make_the_publisher_to_eventually_stop_signaling"
S317_MAX = P + "spec317_must_support_a_pending_element_count_up_to_long_max_value"
S317_OVER = P + "spec317_must_not_signal_on_error_when_pending_above_long_max_value"
ONE_BY_ONE = (
    "test_optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_"
    "subscribers_when_requesting_one_by_one"
)
HAPPY = P + "exercise_whitebox_happy_path"
W201 = P + "spec201_must_signal_demand_via_subscription_request"
W208 = P + "spec208_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel"
W308 = P + "spec308_request_must_register_given_number_elements_to_be_produced"
B209_WITHOUT = (
    P + "spec209_blackbox_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call"
)
B210_WITHOUT = P + "spec210_blackbox_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call"
OWN_104 = P + "spec104_must_call_on_error_on_all_its_subscribers_if_it_encounters_a_non_recoverable_error"
OWN_42 = "test_must_immediately_pass_on_on_error_events_received_from_its_upstream_to_its_downstream"
OWN_LONG_AGO = P + "must_request_from_upstream_for_elements_that_have_been_requested_long_ago"


# -- PublisherVerification ------------------------------------------------------------------------


def test_demand_ignoring_synchronous_publisher_fails_instead_of_hanging() -> None:
    """JVM: spec317_mustSupportAPendingElementCountUpToLongMaxValue_shouldFail_onSynchDemandIgnoringPublisher.
    The kit's receive buffer overflowed silently, so request(2**63 - 1) looped for ever on the test's
    thread; now on_next raises once the buffer overflows and the test fails naming rule 1.1."""
    cls = verification("publisher", lambda n: DemandIgnoringSyncPublisher())
    started = time.monotonic()
    require_failure(cls, S317_MAX, "Rule 1.1", "overflowed")
    assert time.monotonic() - started < 10
    require_failure(cls, S102, "Rule 1.2", "expected on_complete but got on_next")


def test_spec312_accepts_elements_in_flight_after_cancel_but_not_more_than_requested() -> None:
    """JVM: spec312 keeps polling while elements still arrive after cancel and fails only above the
    15 requested. The kit failed a Publisher that honours cancel a little late ("kept signalling")."""
    lagging = verification(
        "publisher", lambda n: ThreadedRangePublisher(n, delay=0.015, cancel_lag=0.12), timeout_ms=1000
    )
    require_pass(lagging, S312)
    flooding = verification(
        "publisher", lambda n: ThreadedRangePublisher(n, delay=0.015, cancel_lag=0.5, overdeliver=True)
    )
    require_failure(flooding, S312, "Rule 3.12", "only 15 were requested")


def test_stochastic_spec103_keeps_the_kits_own_requests_serial() -> None:
    """JVM: the stochastic 1.3 test requests only from within onSubscribe/onNext. The kit also
    requested from the test's thread while on_next (on the Publisher's thread) requested too: the kit
    itself broke rule 2.7, and a Publisher relying on serial request calls could fail."""
    cls = verification("publisher", lambda n: ThreadedRangePublisher(n, check_serial_requests=True), timeout_ms=1000)
    cls.stochastic_iterations = 15  # type: ignore[attr-defined]
    require_pass(cls, S103)


def test_spec303_with_a_large_recursion_bound() -> None:
    """JVM: spec303 does not buffer the elements. With bounded_depth_of_on_next_and_request_recursion()
    above 31 the kit's 32-signal receive buffer overflowed for a correct trampolining Publisher."""
    good = verification("publisher", lambda n: SyncRangePublisher(0, n))
    good.bounded_depth_of_on_next_and_request_recursion = lambda self: 40  # type: ignore[attr-defined]
    require_pass(good, S303)
    bad = verification("publisher", lambda n: BrokenRange(n, "recursive"))
    bad.bounded_depth_of_on_next_and_request_recursion = lambda self: 40  # type: ignore[attr-defined]
    require_failure(bad, S303, "Rule 3.3", "depth 41", "above the bound 40")


def test_spec317_overflow_test_accepts_a_slow_publisher() -> None:
    """JVM: spec317_mustNotSignalOnErrorWhenPendingAboveLongMaxValue only checks that no on_error comes.
    The kit also required 11 elements within one timeout: a correct but slow Publisher failed."""
    slow = verification("publisher", lambda n: ThreadedRangePublisher(n, delay=0.04), timeout_ms=250)
    require_pass(slow, S317_OVER)
    require_failure(verification("publisher", lambda n: BrokenRange(n, "overflow_error")), S317_OVER, "Rule 3.17")


def test_spec317_overflow_synchronous_publisher_ignoring_demand_until_cancel_passes() -> None:
    """JVM: spec317_mustNotSignalOnErrorWhenPendingAboveLongMaxValue_forSynchronousPublisher: emits until
    cancelled, and the kit's subscriber cancels at the 11th element."""
    sent: list[int] = []

    class UntilCancelled:
        def subscribe(self, subscriber: Any) -> None:
            state = {"started": False, "cancelled": False}

            class _Sub:
                def request(self, n: int) -> None:
                    if not state["started"]:
                        state["started"] = True
                        while not state["cancelled"]:
                            sent.append(len(sent))
                            subscriber.on_next(len(sent))

                def cancel(self) -> None:
                    state["cancelled"] = True

            subscriber.on_subscribe(_Sub())

    require_pass(verification("publisher", lambda n: UntilCancelled()), S317_OVER)
    assert len(sent) == 11


def test_multicast_one_by_one_uses_the_jvm_choreography() -> None:
    """JVM: the three Subscribers of spec111 one-by-one request at different paces. The kit requested in
    lock-step, so a Publisher that emits only when all Subscribers have demand passed; the JVM kit skips
    it (does not implement the OPTIONAL rule): an xfail here."""
    lockstep = verification("processor", IdentityProcessor, coordinated_emission=True)
    require_optional_failure(lockstep, ONE_BY_ONE, "1.11")
    require_pass(verification("publisher", lambda n: SyncRangePublisher(0, n)), ONE_BY_ONE)


# -- SubscriberWhiteboxVerification ---------------------------------------------------------------

_WHITEBOX_REQUIRED = [
    HAPPY,
    W201,
    W208,
    W308,
    P + "spec205_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal",
    P + "spec209_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call",
    P + "spec209_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call",
    P + "spec210_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call",
    P + "spec210_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call",
]


def test_one_at_a_time_and_late_requesting_subscribers_pass() -> None:
    """JVM: required_spec208/spec308 ..._shouldWaitForDemandBeforeSignalling and
    ..._shouldWaitForDemandTwiceForOneAtATimeSubscribers (the SubscriberPuppet contract: demand may
    come later, one element at a time). The kit's happy path waited for both triggered requests before
    sending the first element, so a one-at-a-time Subscriber failed it."""
    for one_at_a_time in (False, True):
        cls = verification(
            "whitebox", lambda probe, o=one_at_a_time: DemandCheckingSubscriber(probe, one_at_a_time=o), timeout_ms=1000
        )
        for name in _WHITEBOX_REQUIRED:
            require_pass(cls, name)


def test_whitebox_spec201_delivers_the_requested_element() -> None:
    """JVM: spec201 sends the requested element after the request; a Subscriber whose on_next raises
    failed nothing in the kit's spec201."""
    cls = verification("whitebox", lambda probe: BrokenSubscriber(probe, "raise_on_next"))
    require_failure(cls, W201, "Rule 2.13", "on_next(0) raised RuntimeError")


def test_whitebox_spec208_triggers_requests_after_cancel() -> None:
    """JVM: spec208 calls puppet.triggerRequest(1) twice after cancel: it must not fail."""

    class RaisesAfterCancel(BrokenSubscriber):
        def trigger_request(self, n: int) -> None:
            if self.cancelled:
                raise RuntimeError("trigger_request after cancel")
            super().trigger_request(n)

    cls = verification("whitebox", lambda probe: RaisesAfterCancel(probe))
    require_failure(cls, W208, "Rule 2.8", "puppet.trigger_request(1) raised RuntimeError")
    require_pass(verification("whitebox", lambda probe: BrokenSubscriber(probe)), W208)


# -- SubscriberBlackboxVerification ---------------------------------------------------------------


def _nudged(broken: bool) -> type[VerificationBase]:
    class Nudged(SubscriberBlackboxVerification[int]):
        __test__ = False
        default_timeout_ms = 250
        no_signals_timeout_ms = 30

        def create_subscriber(self) -> NudgedSubscriber:
            return NudgedSubscriber(broken)

        def trigger_request(self, subscriber: Any) -> None:
            subscriber.start()

    return Nudged


def test_blackbox_trigger_request_only_where_the_jvm_kit_calls_it() -> None:
    """JVM: triggerRequest(subscriber) is called by spec201 and the 'with preceding request' tests only.
    The kit called it in every test's setup, so 'without preceding request' was preceded by one."""
    require_failure(_nudged(True), B209_WITHOUT, "Rule 2.9", "AttributeError")
    require_failure(_nudged(True), B210_WITHOUT, "Rule 2.10", "AttributeError")
    good = _nudged(False)
    for name in kit_tests(good):
        if name.startswith(P) and "_py_" not in name:
            require_pass(good, name)


def test_blackbox_spec213_uses_a_fresh_subscriber() -> None:
    """JVM: the blackbox spec213 tests run 'without setup' on a fresh Subscriber (on_next/on_error after
    a no-op on_subscribe). A Subscriber that checks for a second Subscription before checking for None
    raises AttributeError when already subscribed, but TypeError when fresh."""

    class ChecksSecondFirst(BrokenSubscriber):
        def on_subscribe(self, s: Any) -> None:
            if self.s is not None:
                s.cancel()
                return
            super().on_subscribe(s)

    cls = verification("blackbox", lambda: ChecksSecondFirst(None))
    require_pass(cls, P + "spec213_blackbox_on_subscribe_must_throw_type_error_when_parameters_are_none")


# -- IdentityProcessorVerification ----------------------------------------------------------------


def test_non_coordinated_processor_passes_the_multi_subscriber_tests() -> None:
    """A Processor with a queue per Subscriber (one without demand never stalls another) passes the
    JVM choreographies without does_coordinated_emission()."""
    cls = verification("processor", MulticastProcessor)
    for name in (OWN_104, OWN_42, OWN_LONG_AGO):
        require_pass(cls, name)


def test_coordinated_processor_must_say_so_in_spec104_too() -> None:
    """JVM: without doesCoordinatedEmission() spec104 lets only the first Subscriber request; the kit
    had both request in every case, so a lock-step Processor passed without declaring it."""
    require_failure(verification("processor", IdentityProcessor), OWN_104, "Rule 1.1", "does_coordinated_emission()")
    require_pass(verification("processor", IdentityProcessor, coordinated_emission=True), OWN_104)


def test_processor_must_keep_elements_for_a_subscriber_that_asks_later() -> None:
    """JVM: in required_mustRequestFromUpstreamForElementsThatHaveBeenRequestedLongAgo the second
    Subscriber, subscribed before the third element was sent, must get it once it requests 1. The kit
    sent more elements after that request, so a Processor dropping elements for a Subscriber without
    demand passed."""
    dropping = verification("processor", lambda size: MulticastProcessor(size, drop_without_demand=True))
    require_failure(dropping, OWN_LONG_AGO, "Rule 4.1", "downstream 2 subscribed before")


def test_optional_spec104_failures_count_in_the_cli_exit_status() -> None:
    """JVM: optional_spec104 rethrows a failure as an error; so does a FAILED optional test here."""
    from tck_broken import FailedPublisher

    cls = verification("publisher", lambda n: SyncRangePublisher(0, n), failed=lambda: FailedPublisher("no_error"))
    result = run_test(cls, "test_optional_spec104_must_signal_on_error_when_fails")
    assert result.outcome == "FAILED" and result.is_required_failure


# -- ports of the JVM kit's own meta-tests not covered elsewhere ---------------------------------


class _Custom:
    """A Publisher built from a ``request(subscriber, n)`` and an optional ``cancel(subscriber)``."""

    def __init__(self, on_request: Any, on_cancel: Any = None, before: Any = None) -> None:
        self.on_request = on_request
        self.on_cancel = on_cancel
        self.before = before

    def subscribe(self, subscriber: Any) -> None:
        if subscriber is None:
            raise TypeError("subscribe(None)")
        outer = self

        class _Sub:
            def request(self, n: int) -> None:
                outer.on_request(subscriber, n)

            def cancel(self) -> None:
                if outer.on_cancel is not None:
                    outer.on_cancel(subscriber)

        if self.before is not None:
            self.before(subscriber)
            return
        subscriber.on_subscribe(_Sub())


def test_jvm_meta_spec307_cancel_signalling_on_error_fails() -> None:
    pub = _Custom(lambda s, n: None, on_cancel=lambda s: s.on_error(RuntimeError("Boom!")))
    cls = verification("publisher", lambda n: pub)
    require_failure(cls, P + "spec307_after_subscription_is_cancelled_additional_cancelations_must_be_nops", "Rule 3.7")


def test_jvm_meta_spec309_any_value_error_message_passes() -> None:
    def on_request(s: Any, n: int) -> None:
        if n <= 0:
            s.on_error(ValueError("Illegal request value detected!"))

    cls = verification("publisher", lambda n: _Custom(on_request))
    require_pass(cls, P + "spec309_request_zero_must_signal_value_error")
    require_optional_failure(
        cls, "test_optional_spec309_request_negative_number_may_signal_value_error_with_specific_message", "3.9"
    )


def test_jvm_meta_signals_before_on_subscribe_fail_spec109() -> None:
    name = P + "spec109_must_issue_on_subscribe_for_non_none_subscriber"
    for before in (lambda s: s.on_next(1337), lambda s: s.on_error(RuntimeError("Boom!")), lambda s: s.on_complete()):
        require_failure(verification("publisher", lambda n, b=before: _Custom(lambda s, k: None, before=b)), name, "Rule 1.9")
    eager = verification("publisher", lambda n: _Custom(lambda s, k: None, before=lambda s: s.on_complete()), max_elements=0)
    require_optional_failure(eager, "test_optional_spec105_empty_stream_must_terminate_by_signalling_on_complete", "1.9")


def test_jvm_meta_spec102_and_spec107_with_a_demand_ignoring_publisher() -> None:
    cls = verification("publisher", lambda n: DemandIgnoringSyncPublisher())
    require_failure(cls, P + "spec107_must_not_emit_further_signals_once_on_complete_has_been_signalled", "on_next")
    require_failure(cls, P + "spec306_after_subscription_is_cancelled_request_must_be_nops", "Rule 3.6")
    require_pass(cls, P + "spec307_after_subscription_is_cancelled_additional_cancelations_must_be_nops")


def test_jvm_meta_processor_swallowing_errors_fails_spec104() -> None:
    """JVM IdentityProcessorVerificationTest: a Processor that answers any request with on_next(0) and
    swallows the upstream error fails spec104 while waiting for the error."""

    class Swallowing:
        def subscribe(self, s: Any) -> None:
            class _Sub:
                def request(self, n: int) -> None:
                    s.on_next(0)

                def cancel(self) -> None:
                    pass

            s.on_subscribe(_Sub())

        def on_subscribe(self, s: Any) -> None:
            s.request(1)

        def on_next(self, item: Any) -> None:
            pass

        def on_error(self, error: BaseException) -> None:
            pass

        def on_complete(self) -> None:
            pass

    require_failure(verification("processor", lambda size: Swallowing()), OWN_104, "Rule 4.2", "did not reach downstream 1")


def test_a_publisher_that_never_completes_passes_every_test_it_is_not_skipped_from() -> None:
    """JVM: UnboundedIntegerIncrementPublisherTest (max_elements_from_publisher() == Long.MAX_VALUE,
    create_publisher(n) ignores n). The kit's spec302 kept requesting from every on_next and recorded
    the elements, so the 33rd one overflowed its receive buffer: a false rule 1.1 failure."""
    import itertools

    from rstreams.tck import ThreadPoolIterablePublisher
    from rstreams.tck._runner import run_verification

    for make in (lambda n: ThreadPoolIterablePublisher(itertools.count()), lambda n: SyncRangePublisher(0, 2**63)):
        cls = verification("publisher", make, max_elements=2**63 - 1, timeout_ms=1000)
        results = run_verification(cls, select="test_required_")
        assert [(r.name, r.message) for r in results if r.outcome not in ("passed", "skipped")] == []
