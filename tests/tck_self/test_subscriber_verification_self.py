"""The Subscriber verifications must catch deliberately broken Subscribers, naming the broken rule."""

from __future__ import annotations

from typing import Any

import pytest
from tck_broken import BrokenSubscriber
from tck_helpers import require_failure, require_pass, require_skip, verification

from rstreams.tck import SubscriberBlackboxVerification, SubscriberWhiteboxVerification
from rstreams.tck._base import kit_tests

W = "test_required_"
HAPPY = W + "exercise_whitebox_happy_path"
S203C = W + "spec203_must_not_call_methods_on_subscription_or_publisher_in_on_complete"
S203E = W + "spec203_must_not_call_methods_on_subscription_or_publisher_in_on_error"
S205 = (W + "spec205_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_"
        "on_subscribe_signal")
S208 = W + "spec208_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel"
S209W = W + "spec209_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call"
S209WO = W + "spec209_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call"
S210W = W + "spec210_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call"
S210WO = W + "spec210_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call"

WHITEBOX: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    (HAPPY, ("no_cancel",), ("Rule 2.6", "signal_cancel")),
    (HAPPY, ("never_request",), ("Rule 2.1",)),
    (W + "spec201_must_signal_demand_via_subscription_request", ("never_request",), ("Rule 2.1", "request(n)")),
    (S203C, ("request_in_on_complete",), ("Rule 2.3", "request(1) from within on_complete")),
    (S203E, ("cancel_in_on_error",), ("Rule 2.3", "cancel() from within on_error")),
    (S205, ("no_cancel_second",), ("Rule 2.5", "did not cancel a second Subscription")),
    (S205, ("no_cancel_second", "request_second"), ("Rule 2.5", "requested from a second Subscription")),
    (S208, ("raise_after_cancel",), ("Rule 2.8", "raised RuntimeError")),
    (S209W, ("raise_on_complete",), ("Rule 2.9", "on_complete() raised")),
    (S209WO, ("raise_on_complete",), ("Rule 2.9", "on_complete() raised")),
    (S210W, ("raise_on_error",), ("Rule 2.10", "raised RuntimeError")),
    (S210WO, ("raise_on_error",), ("Rule 2.10", "raised RuntimeError")),
    (W + "spec213_on_subscribe_must_throw_type_error_when_parameters_are_none", ("ignore_none",),
     ("Rule 2.13", "on_subscribe(None)")),
    (W + "spec213_on_next_must_throw_type_error_when_parameters_are_none", ("ignore_none",),
     ("Rule 2.13", "on_next(None)")),
    (W + "spec213_on_error_must_throw_type_error_when_parameters_are_none", ("ignore_none",),
     ("Rule 2.13", "on_error(None)")),
    (W + "spec308_request_must_register_given_number_elements_to_be_produced", ("request_one_only",), ("Rule 3.8",)),
    (W + "py_spec204_must_not_call_subscription_after_processing_on_complete", ("request_after_terminal",),
     ("Rule 2.4", "after it had processed on_complete")),
    (W + "py_spec204_must_not_call_subscription_after_processing_on_error", ("request_after_terminal",),
     ("Rule 2.4", "after it had processed on_error")),
    (W + "py_spec207_must_call_request_and_cancel_serially", ("racy_requests",), ("Rule 2.7", "must be serial")),
    (W + "py_spec201_must_consume_an_asynchronous_helper_publisher", ("raise_on_next",),
     ("Rule 2.13", "on_next(0) raised RuntimeError")),
    (W + "py_spec201_must_consume_an_asynchronous_helper_publisher", ("never_request",), ("Rule 2.1",)),
]


@pytest.mark.parametrize(("name", "flags", "fragments"), WHITEBOX, ids=[f"{c[0][14:60]}-{'+'.join(c[1])}" for c in WHITEBOX])
def test_kit_fails_broken_whitebox_subscriber(name: str, flags: tuple[str, ...], fragments: tuple[str, ...]) -> None:
    cls = verification("whitebox", lambda probe: BrokenSubscriber(probe, *flags))
    require_failure(cls, name, *fragments)


def test_every_required_whitebox_test_has_a_broken_subscriber() -> None:
    required = {n for n in kit_tests(SubscriberWhiteboxVerification) if n.startswith(W)}
    assert required - {c[0] for c in WHITEBOX} == set()


def test_unbroken_whitebox_subscriber_passes_the_same_tests() -> None:
    cls = verification("whitebox", lambda probe: BrokenSubscriber(probe), timeout_ms=1000)
    for name in sorted({c[0] for c in WHITEBOX}):
        assert require_pass(cls, name).outcome == "passed"


@pytest.mark.parametrize("name", [n for n in kit_tests(SubscriberWhiteboxVerification) if not n.startswith("test_untested")])
def test_whitebox_subscriber_never_registering_on_subscribe_fails_every_test(name: str) -> None:
    """As the JVM kit's SubscriberNoRegisterOnSubscribeTest: every test with the whitebox setup fails
    naming the missing registration; the two 2.3 tests run 'without setup' and do not need it."""
    cls = verification("whitebox", lambda probe: BrokenSubscriber(probe, "no_register"), timeout_ms=80)
    if name in (S203C, S203E):
        require_pass(cls, name)
    else:
        require_failure(cls, name, "did not call probe.register_on_subscribe")


B = "test_required_"
BLACKBOX: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    (B + "spec201_blackbox_must_signal_demand_via_subscription_request", ("never_request",), ("Rule 2.1",)),
    (B + "spec203_blackbox_must_not_call_methods_on_subscription_or_publisher_in_on_complete",
     ("request_in_on_complete",), ("Rule 2.3", "from within on_complete")),
    (B + "spec203_blackbox_must_not_call_methods_on_subscription_or_publisher_in_on_error",
     ("cancel_in_on_error",), ("Rule 2.3", "from within on_error")),
    (B + "spec205_blackbox_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_"
         "on_subscribe_signal", ("no_cancel_second",), ("Rule 2.5",)),
    (B + "spec209_blackbox_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call",
     ("raise_on_complete",), ("Rule 2.9",)),
    (B + "spec209_blackbox_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call",
     ("raise_on_complete",), ("Rule 2.9",)),
    (B + "spec210_blackbox_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call",
     ("raise_on_error",), ("Rule 2.10",)),
    (B + "spec210_blackbox_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call",
     ("raise_on_error",), ("Rule 2.10",)),
    (B + "spec213_blackbox_on_subscribe_must_throw_type_error_when_parameters_are_none", ("ignore_none",), ("Rule 2.13",)),
    (B + "spec213_blackbox_on_next_must_throw_type_error_when_parameters_are_none", ("ignore_none",), ("Rule 2.13",)),
    (B + "spec213_blackbox_on_error_must_throw_type_error_when_parameters_are_none", ("ignore_none",), ("Rule 2.13",)),
    (B + "py_spec207_blackbox_must_call_request_and_cancel_serially", ("racy_requests",), ("Rule 2.7",)),
    (B + "py_spec201_blackbox_must_consume_an_asynchronous_helper_publisher", ("never_request",),
     ("Rule 2.1", "never requested")),
    (B + "py_spec201_blackbox_must_consume_an_asynchronous_helper_publisher", ("raise_on_next",),
     ("Rule 2.13", "raised RuntimeError")),
]


@pytest.mark.parametrize(("name", "flags", "fragments"), BLACKBOX, ids=[f"{c[0][14:60]}-{'+'.join(c[1])}" for c in BLACKBOX])
def test_kit_fails_broken_blackbox_subscriber(name: str, flags: tuple[str, ...], fragments: tuple[str, ...]) -> None:
    cls = verification("blackbox", lambda: BrokenSubscriber(None, *flags))
    require_failure(cls, name, *fragments)


def test_every_required_blackbox_test_has_a_broken_subscriber() -> None:
    required = {n for n in kit_tests(SubscriberBlackboxVerification) if n.startswith(B)}
    assert required - {c[0] for c in BLACKBOX} == set()


def test_unbroken_blackbox_subscriber_passes_the_same_tests() -> None:
    cls = verification("blackbox", lambda: BrokenSubscriber(None), timeout_ms=1000)
    for name in sorted({c[0] for c in BLACKBOX}):
        assert require_pass(cls, name).outcome == "passed"


def test_blackbox_trigger_request_hook_is_called() -> None:
    nudged: list[Any] = []

    class Nudged(SubscriberBlackboxVerification[int]):
        __test__ = False
        default_timeout_ms = 250
        no_signals_timeout_ms = 30

        def create_subscriber(self) -> BrokenSubscriber:
            return BrokenSubscriber(None, "never_request")

        def trigger_request(self, subscriber: Any) -> None:
            nudged.append(subscriber)
            subscriber.s.request(1)

    require_pass(Nudged, B + "spec201_blackbox_must_signal_demand_via_subscription_request")
    assert len(nudged) == 1 and isinstance(nudged[0], BrokenSubscriber)


def test_untested_subscriber_tests_skip_naming_the_rule() -> None:
    cls = verification("blackbox", lambda: BrokenSubscriber(None))
    r = require_skip(cls, "test_untested_spec208_blackbox_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel")
    assert "rule 2.8" in r.message
