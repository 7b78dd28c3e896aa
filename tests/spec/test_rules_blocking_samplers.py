"""Reactive Streams rule tests (``test_rule_*``) of blocking_latest, blocking_next and blocking_most_recent.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_blocking_samplers.py``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from operators.test_blocking_samplers import IDS, SAMPLERS, waiting, when
from rstreams import Flowable
from rstreams.testing import TestPublisher


@pytest.mark.parametrize(("name", "make"), SAMPLERS, ids=IDS)
def test_rule_2_13_a_none_element_from_a_broken_source_is_an_error(name: str, make: Callable[[Flowable[int]], Any]) -> None:
    from rstreams.testing import Violation

    tp: TestPublisher[Any] = TestPublisher.create_noncompliant(Violation.ALLOW_NONE)
    it = make(Flowable.from_publisher(tp))
    if name == "next":
        t = when(waiting(it), lambda: _ignore_type_error(lambda: tp.next(None)))
        with pytest.raises(TypeError):
            next(it)
        t.join(5)
    else:
        _ignore_type_error(lambda: tp.next(None))
        with pytest.raises(TypeError):
            next(it)
    assert tp.was_cancelled


def _ignore_type_error(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except TypeError:
        pass  # the subscriber answers None with TypeError to the caller (rule 2.13)

