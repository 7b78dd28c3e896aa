"""Reactive Streams rule tests (``test_rule_*``) of the reactivex (RxPY) bridges from_observable and to_observable.

Their other tests (scenarios, properties, arguments) are in ``tests/interop/test_reactivex.py``."""

from __future__ import annotations

from typing import Any

import pytest

rx = pytest.importorskip(
    "reactivex", reason="reactivex (RxPY) is optional: pip install reactivex (or rstreams[bench]) to run these"
)
from reactivex import operators as ops  # noqa: E402
from reactivex.subject import Subject  # noqa: E402

from interop.test_reactivex import BUFFER  # noqa: E402
from rstreams import Flowable  # noqa: E402
from rstreams.errors import NoneElementError  # noqa: E402
from rstreams.testing import TestSubscriber  # noqa: E402


def test_rule_2_13_a_none_element_ends_the_stream() -> None:
    ts: TestSubscriber[Any] = Flowable.from_observable(rx.of(1, None, 3), BUFFER).test()
    ts.assert_failure(NoneElementError, 1).assert_no_violations()


def test_rule_3_13_cancel_disposes_the_observable_subscription() -> None:
    subject: Subject[int] = Subject()
    disposed: list[bool] = []
    src = subject.pipe(ops.finally_action(lambda: disposed.append(True)))
    ts: TestSubscriber[int] = Flowable.from_observable(src, BUFFER).test(1)
    assert len(subject.observers) == 1
    subject.on_next(1)
    ts.cancel()
    assert subject.observers == [] and disposed == [True]
    subject.on_next(2)
    ts.request(1)
    ts.assert_values(1).assert_not_complete().assert_no_violations()

