"""Every processor through the kit's Subscriber verifications.

* ``SubscriberBlackboxVerification``: every processor passes it, rule 2.5 included
  (``required_spec205``: a second ``on_subscribe`` while one upstream is active is cancelled).
* ``SubscriberWhiteboxVerification``, with a probe-forwarding Subscriber downstream of the processor
  (how the IdentityProcessor verification sees a processor as a Subscriber): Unicast and
  ``Multicast(ref_count=True)`` pass it whole inside their IdentityProcessor verification
  (``test_tck_library.py``); Publish, Behavior, Replay and Multicast without ref_count fail exactly
  the two tests where the downstream's cancel must reach the upstream (rule 2.6): they are hubs that
  keep their upstream when subscribers leave, by design (RxJava's do the same). Async emits only the
  last value, so the tests that expect every element fail too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rstreams.processors import (
    AsyncProcessor,
    BehaviorProcessor,
    FlowableProcessor,
    MulticastProcessor,
    PublishProcessor,
    ReplayProcessor,
    UnicastProcessor,
)
from rstreams.tck import SubscriberBlackboxVerification, SubscriberWhiteboxVerification, run_verification
from rstreams.tck._processor import _ProbePuppet

pytestmark = pytest.mark.tck

PROCESSORS: dict[str, Callable[[], FlowableProcessor[Any]]] = {
    "Publish": PublishProcessor.create,
    "Behavior": BehaviorProcessor.create,
    "Replay": ReplayProcessor.create,
    "Async": AsyncProcessor.create,
    "Unicast": UnicastProcessor.create,
    "Multicast": lambda: MulticastProcessor.create(16),
    "MulticastRefCount": lambda: MulticastProcessor.create(16, ref_count=True),
    "SerializedPublish": lambda: PublishProcessor.create().to_serialized(),
}


class _Timeouts:
    default_timeout_ms = 2000
    no_signals_timeout_ms = 40
    poll_timeout_ms = 2
    publisher_reference_gc_timeout_ms = 100
    optional_timeout_ms = 200  # an unimplemented OPTIONAL rule is an xfail after this wait


def _blackbox(name: str, make: Callable[[], FlowableProcessor[Any]]) -> type:
    return type(
        f"TestTck{name}ProcessorAsBlackboxSubscriber",
        (_Timeouts, SubscriberBlackboxVerification),
        {"create_subscriber": lambda self: make(), "__module__": __name__},
    )


for _name, _make in PROCESSORS.items():
    globals()[f"TestTck{_name}ProcessorAsBlackboxSubscriber"] = _blackbox(_name, _make)


def _whitebox_outcomes(make: Callable[[], FlowableProcessor[Any]]) -> dict[str, str]:
    class Whitebox(SubscriberWhiteboxVerification[Any]):
        __test__ = False
        # the two expected failures wait this long for a cancel; shorter, the passing tests that
        # consume an asynchronous publisher time out on a loaded machine
        default_timeout_ms = 1000
        no_signals_timeout_ms = 40
        poll_timeout_ms = 2

        def create_subscriber(self, probe: Any) -> Any:
            p = make()
            p.subscribe(_ProbePuppet(probe))
            return p

    return {r.name: r.outcome for r in run_verification(Whitebox) if r.outcome not in ("untested", "skipped")}


_CANCEL_REACHES_UPSTREAM = {
    "test_required_exercise_whitebox_happy_path",
    "test_required_spec208_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel",
}


@pytest.mark.parametrize("name", ["Publish", "Behavior", "Replay", "Multicast"])
def test_whitebox_hubs_fail_only_where_a_downstream_cancel_must_reach_the_upstream(name: str) -> None:
    outcomes = _whitebox_outcomes(PROCESSORS[name])
    failed = {n for n, o in outcomes.items() if o != "passed"}
    assert failed == _CANCEL_REACHES_UPSTREAM
    assert outcomes[
        "test_required_spec205_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal"
    ] == "passed"


@pytest.mark.parametrize("name", ["Unicast", "MulticastRefCount"])
def test_whitebox_identity_processors_pass_whole(name: str) -> None:
    outcomes = _whitebox_outcomes(PROCESSORS[name])
    assert outcomes and all(o == "passed" for o in outcomes.values()), outcomes
