"""Reactive Streams rule tests (``test_rule_*``) of map_not_none, and None from a user function on fused chains.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_map_not_none_and_fused_none.py``."""

from __future__ import annotations

from typing import Any

import pytest

from rstreams import Flowable
from rstreams.errors import NoneElementError


@pytest.mark.parametrize("where", [0, 1])
def test_rule_2_13_a_none_from_a_fused_zip_input_never_reaches_the_zipper(where: int) -> None:
    """Fused or not, a None produced by one of zip's inputs is a NoneElementError naming that
    input, and the zipper never sees it. (Which rows come out before the error may differ: the
    unfused zip prefetches its first input before the second emits, the fused one forms rows in
    lockstep; both end with the same error and no row holds a None.)"""
    seen: list[tuple[Any, Any]] = []

    def zipper(a: Any, b: Any) -> tuple[Any, Any]:
        seen.append((a, b))
        return (a, b)

    inputs = [[1, 2, 3, 4], [10, 20, 30, 40]]
    inputs[where][2] = None
    for hide in (False, True):
        seen.clear()
        a, b = (Flowable.from_iterable(xs) for xs in inputs)
        if hide:
            a, b = a.hide(), b.hide()
        ts = Flowable.zip(a, b, zipper).test()
        ts.assert_error(NoneElementError, match="from_iterable").assert_no_violations()
        assert all(None not in pair for pair in seen), seen
        assert ts.values == seen[: len(ts.values)]
        assert len(ts.values) <= 2
        tsz = Flowable.zip(a, b).test()  # no zipper: the rows themselves
        tsz.assert_error(NoneElementError).assert_no_violations()
        assert all(None not in row for row in tsz.values)

