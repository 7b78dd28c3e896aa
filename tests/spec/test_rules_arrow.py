"""Reactive Streams rule tests (``test_rule_*``) of Flowable.from_arrow (a fused row source),
outside Spark.

Their other tests (scenarios, properties, arguments) are in ``tests/interop/test_arrow.py``."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pyarrow", reason="pyarrow is optional (pip install pyarrow, or rstreams[spark])")

from interop.test_arrow import _rows, _table  # noqa: E402
from rstreams import Flowable  # noqa: E402
from rstreams.testing import TestSubscriber  # noqa: E402


def test_rule_1_1_from_arrow_emits_no_more_than_requested() -> None:
    ts: TestSubscriber[Any] = Flowable.from_arrow(_table(5)).test(0)
    ts.assert_no_values()
    ts.request(2)
    ts.assert_values(*_rows(2)).assert_not_complete()
    ts.request(3)
    ts.assert_result(*_rows(5)).assert_no_violations()  # exact size: completes with the last row


def test_rule_3_13_cancel_stops_the_rows() -> None:
    ts: TestSubscriber[Any] = Flowable.from_arrow(_table(10)).test(3)
    ts.cancel()
    ts.request(5)
    ts.assert_values(*_rows(3)).assert_not_complete().assert_no_errors().assert_no_violations()
    Flowable.from_arrow(_table(100)).take(4).test().assert_result(*_rows(4)).assert_no_violations()


def test_rule_3_9_a_bad_request_is_an_error() -> None:
    ts: TestSubscriber[Any] = Flowable.from_arrow(_table(3)).test(0)
    ts.request(0)
    ts.assert_failure(ValueError).assert_no_violations()
