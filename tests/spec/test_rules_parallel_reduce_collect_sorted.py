"""Reactive Streams rule tests (``test_rule_*``) of ParallelFlowable's folds (``reduce``,
``reduce_rails``, ``collect``): None from the reducer, a None seed or container.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_parallel_reduce_collect_sorted.py``."""

from __future__ import annotations

import operator
from typing import Any

from operators.test_parallel_reduce_collect_sorted import RUN_ON, _par
from rstreams import Flowable
from rstreams.errors import NoneElementError
from rstreams.testing import TestSubscriber


def test_rule_2_13_none_from_the_reducer_is_a_none_element_error() -> None:
    for run_on in RUN_ON:
        ts: TestSubscriber[Any] = _par(Flowable.range(0, 10), 2, run_on).reduce(lambda a, b: None).test()
        ts.await_done(5).assert_failure(NoneElementError).assert_no_violations()

        def none_in_combine(a: int, b: int) -> int | None:
            return None if a + b > 30 else a + b

        ts = _par(Flowable.range(0, 10), 2, run_on).reduce(none_in_combine).test()
        ts.await_done(5).assert_failure(NoneElementError).assert_no_violations()


def test_rule_2_13_none_seed_or_container_is_an_error() -> None:
    add: Any = operator.add
    to_none: Any = lambda a, x: None  # noqa: E731 - deliberately ill-typed: the rule 2.13 case
    ts: TestSubscriber[Any] = (
        Flowable.range(0, 4).parallel(2).reduce_rails(lambda: None, add).sequential().test()
    )
    ts.await_done(5).assert_failure(NoneElementError).assert_no_violations()
    ts = Flowable.range(0, 4).parallel(2).collect(lambda: None, lambda c, x: None).sequential().test()
    ts.await_done(5).assert_failure((NoneElementError, TypeError)).assert_no_violations()
    ts = Flowable.range(0, 4).parallel(2).reduce_rails(lambda: 0, to_none).sequential().test()
    ts.await_done(5).assert_failure((NoneElementError, TypeError)).assert_no_violations()
