"""Reactive Streams rule tests (``test_rule_*``) of the Subscription helpers of rstreams._internal.subscriptions.

Their other tests (scenarios, properties, arguments) are in ``tests/internal/test_subscriptions.py``."""

from __future__ import annotations

import pytest

from internal._helpers import RecordingSubscription
from internal.test_subscriptions import _ref
from rstreams import Flowable
from rstreams._internal.atomics import AtomicInt
from rstreams._internal.requests import validate_request
from rstreams._internal.subscriptions import (
    DeferredSubscription,
    deferred_request,
    deferred_set_once,
)
from rstreams.testing import TestSubscriber


@pytest.mark.parametrize("bad", [0, -5, True, 1.5, None, "3"])
def test_rule_3_9_bad_amount_before_arrival_reaches_the_upstream_as_a_bad_request(bad: object) -> None:
    """A bad amount requested before the upstream exists is neither dropped (0), nor subtracted
    from earlier demand (-5), nor counted as 1 (True): the upstream gets a non-positive request,
    which every Subscription answers with the rule 3.9 error, and later demand cannot mend it."""
    ref, requested = _ref(), AtomicInt()
    deferred_request(ref, requested, 3)
    deferred_request(ref, requested, bad)  # type: ignore[arg-type]
    deferred_request(ref, requested, 10)  # the poison is sticky
    up = RecordingSubscription()
    assert deferred_set_once(ref, requested, up) is True
    assert len(up.requests) == 1 and validate_request(up.requests[0]) is not None


def test_rule_3_9_bad_amount_before_arrival_fails_a_real_upstream() -> None:
    d = DeferredSubscription()
    d.request(0)
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, 5).hide().subscribe(ts)
    # the TestSubscriber's own subscription is the upstream the deferred demand is forwarded to
    up = ts.subscription
    assert up is not None
    d.set_upstream(up)
    ts.assert_error(ValueError).assert_no_values()
    assert "3.9" in str(ts.errors[0])

