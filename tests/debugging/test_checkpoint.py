"""checkpoint(description, trace=...): the description (and the assembling line) as a note on
errors passing it; elements, demand and cancellation pass through unchanged."""

from __future__ import annotations

import os
from typing import Any

import pytest

from rstreams import Flowable, schedulers
from rstreams.testing import TestPublisher, TestSubscriber

HERE = os.path.basename(__file__)


class Boom(Exception):
    pass


def fail_at_2(x: int) -> int:
    if x == 2:
        raise Boom("two")
    return x


def line_of(marker: str) -> int:
    with open(__file__) as f:
        for i, text in enumerate(f, 1):
            if marker in text and "line_of" not in text:
                return i
    raise AssertionError(marker)


def notes_of(ts: TestSubscriber[Any]) -> list[str]:
    ts.assert_error(Boom).assert_no_violations()
    return list(getattr(ts.errors[0], "__notes__", []))


def test_description_note_on_a_fused_chain() -> None:
    ts = Flowable.range(0, 5).map(fail_at_2).checkpoint("parsed").map(str).test()
    ts.assert_values("0", "1")
    assert notes_of(ts) == ["checkpoint: parsed"]


def test_trace_adds_the_assembling_line() -> None:
    ts = Flowable.range(0, 5).map(fail_at_2).checkpoint("parsed", trace=True).test()  # traced-cp
    assert notes_of(ts) == [f"checkpoint: parsed ({HERE}:{line_of('# traced-cp')})"]


def test_no_description_is_a_traced_checkpoint() -> None:
    ts = Flowable.range(0, 5).map(fail_at_2).checkpoint().test()  # bare-cp
    assert notes_of(ts) == [f"checkpoint ({HERE}:{line_of('# bare-cp')})"]


def test_several_checkpoints_in_order_across_a_thread_boundary() -> None:
    ts = (
        Flowable.range(0, 5)
        .map(fail_at_2)
        .checkpoint("parse")
        .observe_on(schedulers.single())
        .checkpoint("after hand-off")
        .test()
        .await_done()
    )
    assert notes_of(ts) == ["checkpoint: parse", "checkpoint: after hand-off"]


def test_errors_upstream_of_it_only() -> None:
    ts = Flowable.range(0, 5).checkpoint("before").map(fail_at_2).test()
    assert notes_of(ts) == []


def test_passes_demand_elements_and_cancel_through() -> None:
    tp: TestPublisher[int] = TestPublisher()
    ts = Flowable.from_publisher(tp).checkpoint("x").test(2)
    assert tp.requested == 2
    tp.next(1, 2)
    ts.assert_values(1, 2)
    ts.cancel()
    assert tp.was_cancelled
    ts.assert_no_violations()


def test_completion_passes() -> None:
    Flowable.just(1, 2).checkpoint("x").test(1).assert_values(1).request(1).assert_result(1, 2).assert_no_violations()


def test_description_must_be_text() -> None:
    with pytest.raises(TypeError):
        Flowable.just(1).checkpoint(42)  # type: ignore[arg-type]
