"""Reactive Streams rule tests (``test_rule_*``) of element_at, element_at_or_error, first, last and default_if_empty.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_element_ops.py``."""

from __future__ import annotations

from typing import Any

import pytest

from operators.test_element_ops import both
from rstreams import Flowable


@pytest.mark.parametrize(
    "op",
    [
        lambda f: f.first(),
        lambda f: f.last(),
        lambda f: f.element_at(1),
        lambda f: f.element_at_or_error(1),
        lambda f: f.default_if_empty(0),
    ],
    ids=["first", "last", "element_at", "element_at_or_error", "default_if_empty"],
)
@pytest.mark.parametrize("bad", [0, -3])
def test_rule_3_9_bad_request(op: Any, bad: int) -> None:
    for _, src in both([1, 2, 3]):
        op(src).test(0).request(bad).assert_no_values().assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_3_9_default_if_empty_bad_request_after_completion() -> None:
    ts = Flowable.empty().default_if_empty(1).test(0)
    ts.assert_not_complete()
    ts.request(0)
    ts.assert_no_values().assert_error(ValueError, match="3.9").assert_no_violations()
    ts.request(1)
    ts.assert_no_values().assert_no_violations()


def test_rule_1_1_default_if_empty_passes_requests_through() -> None:
    calls: list[int] = []
    ts = Flowable.range(0, 5).hide().do_on_request(calls.append).default_if_empty(9).test(2)
    ts.assert_values(0, 1).assert_not_complete()
    ts.request(3)
    ts.assert_result(0, 1, 2, 3, 4).assert_no_violations()
    assert calls == [2, 3]

