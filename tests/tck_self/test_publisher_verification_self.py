"""The PublisherVerification must catch deliberately broken Publishers, naming the broken rule."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from tck_broken import LEAK, BrokenRange, FailedPublisher
from tck_helpers import (
    require_failure,
    require_optional_failure,
    require_pass,
    require_skip,
    run_test,
    verification,
)

from rstreams.tck import PublisherVerification, SyncRangePublisher
from rstreams.tck._base import kit_tests

P = "test_required_"

# (kit test, bug flags, fragments the failure message must contain)
FAILURES: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    (P + "create_publisher1_must_produce_a_stream_of_exactly1_element", ("too_many",), ("Rule 1.5", "exactly 1 element")),
    (P + "create_publisher3_must_produce_a_stream_of_exactly3_elements", ("too_few",), ("Rule 1.1", "exactly 3 elements")),
    (P + "create_publisher1_must_produce_a_stream_of_exactly1_element", ("never_complete",), ("Rule 1.5",)),
    (P + "spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements",
     ("emit_before_request",), ("Rule 1.1", "before any request")),
    (P + "spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements",
     ("over_deliver",), ("Rule 1.1", "more than the 1 element requested")),
    (P + "spec102_may_signal_less_than_requested_and_terminate_subscription", ("never_complete",), ("Rule 1.2",)),
    (P + "spec105_must_signal_on_complete_when_finite_stream_terminates", ("never_complete",), ("Rule 1.5",)),
    (P + "spec107_must_not_emit_further_signals_once_on_complete_has_been_signalled",
     ("signal_after_terminal",), ("Rule 1.7", "after on_complete")),
    (P + "spec109_subscribe_throw_type_error_on_none_subscriber", ("no_type_error",), ("Rule 1.9", "subscribe(None)")),
    (P + "spec109_must_issue_on_subscribe_for_non_none_subscriber",
     ("signal_before_on_subscribe",), ("Rule 1.9", "before on_subscribe")),
    (P + "spec109_must_issue_on_subscribe_for_non_none_subscriber",
     ("on_subscribe_twice",), ("Rule 2.12", "on_subscribe was signalled 2 times")),
    (P + "spec109_must_issue_on_subscribe_for_non_none_subscriber",
     ("raise_from_subscribe",), ("Rule 1.9", "subscribe() raised")),
    (P + "spec302_must_allow_synchronous_request_calls_from_on_next_and_on_subscribe",
     ("error_on_reentrant_request",), ("Rule 3.2",)),
    (P + "spec303_must_not_allow_unbounded_recursion", ("recursive",), ("Rule 3.3", "depth 2")),
    (P + "spec306_after_subscription_is_cancelled_request_must_be_nops", ("ignore_cancel",), ("Rule 3.6",)),
    (P + "spec307_after_subscription_is_cancelled_additional_cancelations_must_be_nops",
     ("raise_on_second_cancel",), ("Rule 3.7", "cancel() number 2 raised")),
    (P + "spec309_request_zero_must_signal_value_error", ("ignore_bad_request",), ("Rule 3.9", "request(0)")),
    (P + "spec309_request_negative_number_must_signal_value_error", ("ignore_bad_request",), ("Rule 3.9",)),
    (P + "spec309_request_zero_must_signal_value_error", ("raise_on_bad_request",), ("Rule 3.9", "raised TypeError")),
    (P + "spec312_cancel_must_make_the_publisher_to_eventually_stop_signaling", ("cancel_floods",), ("Rule 3.12", "only 15 were requested")),
    (P + "spec313_cancel_must_make_the_publisher_eventually_drop_all_references_to_the_subscriber",
     ("keep_reference",), ("Rule 3.13", "still references the Subscriber")),
    (P + "spec317_must_support_a_pending_element_count_up_to_long_max_value", ("error_at_max",), ("Rule 3.17",)),
    (P + "spec317_must_support_a_cumulative_pending_element_count_up_to_long_max_value",
     ("error_at_max", "deferred"), ("Rule 3.17", "cumulative")),
    (P + "spec317_must_not_signal_on_error_when_pending_above_long_max_value",
     ("overflow_error",), ("Rule 3.17", "effectively unbounded")),
    (P + "py_spec106_must_consider_subscription_cancelled_after_on_complete",
     ("raise_on_cancel_after_complete",), ("Rule 1.6", "after on_complete raised")),
    (P + "py_spec106_must_consider_subscription_cancelled_after_on_complete",
     ("signal_after_terminal",), ("Rule 1.",)),
    (P + "py_spec107_must_not_emit_further_signals_once_on_error_has_been_signalled",
     ("emit_after_error",), ("Rule 1.7", "after on_error")),
    (P + "py_spec110_subscribe_same_subscriber_twice_must_return_normally",
     ("reject_same_twice",), ("Rule 1.10", "subscribe() raised")),
    (P + "py_spec213_must_consider_subscription_cancelled_and_report_error_if_on_next_raises",
     ("propagate_errors",), ("Rule 2.13", "must not escape")),
    (P + "py_spec213_must_consider_subscription_cancelled_and_report_error_if_on_next_raises",
     ("swallow_errors",), ("Rule 2.13", "swallowed")),
    (P + "py_spec213_must_consider_subscription_cancelled_and_report_error_if_on_next_raises",
     ("ignore_errors",), ("Rule 2.13", "considered cancelled")),
    (P + "py_spec305_cancel_must_be_thread_safe_and_idempotent", ("unsafe_cancel",), ("Rule 3.5", "threads at once")),
    (P + "py_spec315_cancel_must_return_normally", ("raise_on_cancel_after_complete",), ("Rule 3.15", "after on_complete")),
    (P + "py_spec316_request_must_return_normally", ("raise_from_request",), ("Rule 3.16", "raised RuntimeError")),
    (P + "py_spec317_request_above_long_max_value_must_mean_unbounded", ("huge_is_error",), ("Rule 3.17", "2**64")),
    (P + "py_spec309_request_bool_must_signal_error", ("bool_is_one",), ("Rule 3.9", "request(True)")),
    (P + "py_spec309_request_float_must_signal_error", ("raise_on_bad_request",), ("Rule 3.9", "request(1.5) raised")),
    (P + "py_spec309_request_none_must_signal_error", ("ignore_bad_request",), ("Rule 3.9", "request(None)")),
]


def _broken(*flags: str) -> Any:
    return verification("publisher", lambda n: BrokenRange(n, *flags), failed=lambda: FailedPublisher())


@pytest.mark.parametrize(("name", "flags", "fragments"), FAILURES, ids=[f"{c[0][14:60]}-{'+'.join(c[1])}" for c in FAILURES])
def test_kit_fails_broken_publisher(name: str, flags: tuple[str, ...], fragments: tuple[str, ...]) -> None:
    try:
        require_failure(_broken(*flags), name, *fragments)
    finally:
        LEAK.clear()


def test_every_required_publisher_test_has_a_broken_publisher() -> None:
    required = {n for n in kit_tests(PublisherVerification) if n.startswith(P)}
    config = {P + "validate_max_elements_from_publisher", P + "validate_bounded_depth_of_on_next_and_request_recursion",
              P + "spec109_may_reject_calls_to_subscribe_if_publisher_is_unable_or_unwilling_to_serve_them_rejection_must_trigger_on_error_after_on_subscribe"}  # noqa: E501
    covered = {c[0] for c in FAILURES} | config
    assert required - covered == set()


def test_the_unbroken_naive_publisher_passes_the_same_tests() -> None:
    """Control: the failures above come from the flags, not from the naive implementation."""
    cls = verification("publisher", lambda n: BrokenRange(n), failed=lambda: FailedPublisher(), timeout_ms=1000)
    for name in sorted({c[0] for c in FAILURES}):
        require_pass(cls, name)


def test_spec313_passes_when_only_a_full_collection_frees_the_subscriber() -> None:
    """The kit collects the young generations first; a Subscriber held by a dropped cycle in the
    oldest generation still counts as dropped (the full collection runs before the verdict)."""
    generations: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            generations.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        require_pass(_broken("old_cycle"), P + "spec313_cancel_must_make_the_publisher_eventually_drop_all_references_to_the_subscriber")
    finally:
        gc.callbacks.remove(seen)
    assert generations[-3:] == [0, 1, 2], generations


@pytest.mark.parametrize(
    ("name", "outcome", "left_open"),
    [
        # the OPTIONAL 1.10 test subscribes one subscriber twice and leaves both streams open
        ("test_optional_py_spec110_reject_same_subscriber_subscribing_twice", "xfail-optional", 2),
        # a test that fails while waiting for an element (the stream never ends)
        ("test_required_spec302_must_allow_synchronous_request_calls_from_on_next_and_on_subscribe", "FAILED", 1),
    ],
)
def test_a_stream_a_test_leaves_open_is_cancelled_at_its_end(name: str, outcome: str, left_open: int) -> None:
    """An endless Publisher must not go on signalling into the process after the kit's test."""
    from rstreams import Flowable

    cancels: list[int] = []
    cls = verification("publisher", lambda n: Flowable.never().do_on_cancel(lambda: cancels.append(1)))
    result = run_test(cls, name)
    assert result.outcome == outcome, result
    assert len(cancels) == left_open, (result.outcome, result.message)


def test_stochastic_spec103_catches_concurrent_on_next() -> None:
    cls = _broken("concurrent")
    cls.stochastic_iterations = 100  # type: ignore[attr-defined]
    require_failure(cls, "test_stochastic_spec103_must_signal_on_methods_sequentially", "Rule 1.3", "concurrent")


def test_stochastic_spec103_skipped_on_request() -> None:
    cls = verification("publisher", lambda n: SyncRangePublisher(0, n), skip_stochastic=True)
    assert require_skip(cls, "test_stochastic_spec103_must_signal_on_methods_sequentially", "skip_stochastic_tests()").outcome in ("skipped", "untested")


def test_config_knobs_are_validated() -> None:
    class BadMax(PublisherVerification[int]):
        __test__ = False

        def create_publisher(self, elements: int) -> SyncRangePublisher:
            return SyncRangePublisher(0, elements)

        def max_elements_from_publisher(self) -> int:
            return -1

        def bounded_depth_of_on_next_and_request_recursion(self) -> int:
            return 0

    require_failure(BadMax, P + "validate_max_elements_from_publisher", "max_elements_from_publisher() must be")
    require_failure(
        BadMax, P + "validate_bounded_depth_of_on_next_and_request_recursion", "must be an int >= 1, got 0"
    )
    # -1 elements: every test that needs elements is skipped with the reason
    require_skip(BadMax, P + "spec102_may_signal_less_than_requested_and_terminate_subscription", "max_elements_from_publisher() = -1")


def test_failed_publisher_must_signal_on_error() -> None:
    name = (P + "spec109_may_reject_calls_to_subscribe_if_publisher_is_unable_or_unwilling_to_serve_them_"
            "rejection_must_trigger_on_error_after_on_subscribe")
    never = verification("publisher", lambda n: SyncRangePublisher(0, n), failed=lambda: FailedPublisher("no_error"))
    require_failure(never, name, "Rule 1.9", "on_error after on_subscribe")
    raising = verification(
        "publisher", lambda n: SyncRangePublisher(0, n), failed=lambda: FailedPublisher("raise_from_subscribe")
    )
    require_failure(raising, name, "Rule 1.9", "subscribe() raised")
    late = verification(
        "publisher", lambda n: SyncRangePublisher(0, n), failed=lambda: FailedPublisher("signal_after_error")
    )
    require_failure(late, name, "Rule 1.7")
    # as in the JVM kit, optional_spec104 is skipped without a failed Publisher, but a failed Publisher
    # that misbehaves FAILS it (no xfail): never signalling on_error, or raising from subscribe()
    require_failure(never, "test_optional_spec104_must_signal_on_error_when_fails", "Rule 1.4", "did not signal on_error")
    require_failure(raising, "test_optional_spec104_must_signal_on_error_when_fails", "Rule 1.4", "subscribe() raised")
    require_failure(late, "test_optional_spec104_must_signal_on_error_when_fails", "Rule 1.7")
    require_pass(
        verification("publisher", lambda n: SyncRangePublisher(0, n), failed=FailedPublisher),
        "test_optional_spec104_must_signal_on_error_when_fails",
    )
    require_pass(verification("publisher", lambda n: SyncRangePublisher(0, n), failed=FailedPublisher), name)


def test_no_failed_publisher_skips_with_reason() -> None:
    cls = verification("publisher", lambda n: SyncRangePublisher(0, n))
    name = (P + "spec109_may_reject_calls_to_subscribe_if_publisher_is_unable_or_unwilling_to_serve_them_"
            "rejection_must_trigger_on_error_after_on_subscribe")
    require_skip(cls, name, "create_failed_publisher() returned None")
    require_skip(cls, "test_optional_spec104_must_signal_on_error_when_fails", "create_failed_publisher() returned None")


def test_optional_failures_are_visible_xfails() -> None:
    naive = _broken()
    require_optional_failure(naive, "test_optional_py_spec110_reject_same_subscriber_subscribing_twice", "1.10")
    require_optional_failure(
        _broken("vague_bad_request"),
        "test_optional_spec309_request_negative_number_may_signal_value_error_with_specific_message",
        "3.9",
    )
    require_optional_failure(
        _broken("never_complete"), "test_optional_spec105_empty_stream_must_terminate_by_signalling_on_complete", "1.5"
    )
    # a publisher that gives each Subscriber a different sequence is not a multicast publisher
    class Shifted:
        def __init__(self, n: int) -> None:
            self.n = n
            self.count = 0

        def subscribe(self, s: Any) -> None:
            self.count += 1
            SyncRangePublisher(100 * self.count, self.n).subscribe(s)

    require_optional_failure(
        verification("publisher", Shifted),
        "test_optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_"
        "subscribers_when_requesting_many_upfront",
        "1.11",
        "different sequences",
    )
    # an empty publisher completing eagerly, inside subscribe(), is fine (RS 1.0.3)
    require_pass(_broken(), "test_optional_spec105_empty_stream_must_terminate_by_signalling_on_complete")
    # a unicast-only publisher: the second Subscriber is refused with on_error
    class Unicast:
        def __init__(self, n: int) -> None:
            self.used = False
            self.n = n

        def subscribe(self, s: Any) -> None:
            if self.used:
                FailedPublisher().subscribe(s)
                return
            self.used = True
            SyncRangePublisher(0, self.n).subscribe(s)

    require_optional_failure(
        verification("publisher", Unicast), "test_optional_spec111_may_support_multi_subscribe", "1.11"
    )


def test_untested_tests_skip_naming_the_rule() -> None:
    cls = verification("publisher", lambda n: SyncRangePublisher(0, n))
    r = require_skip(cls, "test_untested_spec110_reject_a_subscription_request_if_the_same_subscriber_subscribes_twice")
    assert r.outcome == "untested" and "rule 1.10" in r.message


def test_never_completing_publisher_skips_completion_tests() -> None:
    cls = verification("publisher", lambda n: SyncRangePublisher(0, n), max_elements=2**63 - 1)
    assert require_skip(cls, P + "spec102_may_signal_less_than_requested_and_terminate_subscription", "never completes").outcome in ("skipped", "untested")
    assert require_pass(cls, P + "spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements").outcome == "passed"


def test_observations_of_may_rules_are_reported() -> None:
    cls = verification("publisher", lambda n: SyncRangePublisher(0, n))
    r = require_pass(cls, "test_optional_py_spec310_request_may_synchronously_call_on_next")
    assert r.observations and "3.10" in r.observations[0] and "synchronously" in r.observations[0]
