"""The IdentityProcessorVerification: delegation of every Publisher/whitebox test, and its own tests."""

from __future__ import annotations

import pytest
from tck_broken import EagerProcessor, NoErrorPassingProcessor, StopsRequestingProcessor
from tck_helpers import require_failure, require_pass, require_skip, verification

from rstreams.tck import (
    IdentityProcessor,
    IdentityProcessorVerification,
    PublisherVerification,
    SubscriberWhiteboxVerification,
)
from rstreams.tck._base import kit_tests

OWN_104 = "test_required_spec104_must_call_on_error_on_all_its_subscribers_if_it_encounters_a_non_recoverable_error"
OWN_42 = "test_must_immediately_pass_on_on_error_events_received_from_its_upstream_to_its_downstream"
OWN_LONG_AGO = "test_required_must_request_from_upstream_for_elements_that_have_been_requested_long_ago"


def test_every_publisher_and_whitebox_test_is_delegated() -> None:
    names = set(kit_tests(IdentityProcessorVerification))
    delegated = set(kit_tests(PublisherVerification)) | set(kit_tests(SubscriberWhiteboxVerification))
    assert delegated <= names
    assert names - delegated == {OWN_104, OWN_42, OWN_LONG_AGO}
    for name in delegated:
        ours = getattr(IdentityProcessorVerification, name)
        theirs = getattr(PublisherVerification, name, None) or getattr(SubscriberWhiteboxVerification, name)
        assert (ours.__tck_rule__, ours.__tck_kind__) == (theirs.__tck_rule__, theirs.__tck_kind__)
    assert getattr(IdentityProcessorVerification, OWN_42).__tck_kind__ == "required"


def test_processor_that_swallows_upstream_errors_fails_rule_4_2() -> None:
    cls = verification("processor", NoErrorPassingProcessor, coordinated_emission=True)
    require_failure(cls, OWN_42, "Rule 4.2", "without any request")
    require_failure(cls, OWN_104, "Rule 4.2", "did not reach downstream 1")


def test_processor_that_stops_requesting_fails() -> None:
    cls = verification("processor", StopsRequestingProcessor, coordinated_emission=True)
    cls.processor_buffer_size = 4  # type: ignore[attr-defined]
    require_failure(cls, OWN_LONG_AGO, "Rule 2.1", "stopped requesting from upstream")
    good = verification("processor", IdentityProcessor, coordinated_emission=True)
    good.processor_buffer_size = 4  # type: ignore[attr-defined]
    require_pass(good, OWN_LONG_AGO)


def test_processor_ignoring_demand_fails_delegated_publisher_test() -> None:
    cls = verification("processor", EagerProcessor)
    require_failure(
        cls,
        "test_required_spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements",
        "Rule 1.1",
    )


@pytest.mark.parametrize("name", [OWN_104, OWN_42, OWN_LONG_AGO])
def test_reference_processor_passes_own_tests(name: str) -> None:
    assert require_pass(verification("processor", IdentityProcessor, coordinated_emission=True), name).outcome == "passed"


def test_coordinated_processor_must_say_so() -> None:
    """The lock-step reference Processor stalls a Subscriber while another has no demand: without
    does_coordinated_emission() the kit fails it, and the message says which knob to set."""
    cls = verification("processor", IdentityProcessor)
    require_failure(cls, OWN_LONG_AGO, "Rule 2.1", "does_coordinated_emission()")


def test_single_subscriber_processor_skips_multi_subscriber_tests() -> None:
    class Single(IdentityProcessorVerification[int]):
        __test__ = False

        def create_identity_processor(self, buffer_size: int) -> IdentityProcessor[int]:
            return IdentityProcessor(buffer_size)

        def max_supported_subscribers(self) -> int:
            return 1

    assert require_skip(Single, OWN_104, "max_supported_subscribers() = 1").outcome in ("skipped", "untested")
    assert require_skip(Single, OWN_LONG_AGO, "max_supported_subscribers() = 1").outcome in ("skipped", "untested")
