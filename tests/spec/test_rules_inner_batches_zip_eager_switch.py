"""Reactive Streams rule tests (``test_rule_*``) of the inner batches of zip, concat_map_eager and
switch_map: a few elements requested at a time (rule 1.1), a cancel in the middle of a batch
(rule 3.12), and an inner overflowing its demand in one batch giving the one-by-one error (rule 1.1).
Each runs batched and one by one and compares the signals.

Their other tests (unbounded, inner errors, zippers, batch-capable consumers) are in
``tests/operators/test_inner_batches_zip_eager_switch.py``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from operators import test_inner_batches_zip_eager_switch as _zip_eager_switch
from operators.test_inner_batches_zip_eager_switch import (
    CASES,
    OPS,
    WAIT,
    N,
    Outcome,
    _both,
    _expected,
    _make_inner,
    _outcome,
)
from rstreams import Flowable
from rstreams.errors import MissingBackpressureError
from rstreams.testing import TestSubscriber

# that module's fixtures, used here as there: ``batches`` (the sizes of the batches the inners took in
# one step) and the autouse check that no error went undeliverable
batches = _zip_eager_switch.batches
_no_undeliverable = _zip_eager_switch._no_undeliverable


def _stepwise(f: Flowable[Any], step: int, total: int) -> Outcome:
    """Request ``step`` elements at a time, each time only once the previous ones arrived (the
    stream has ``total`` elements)."""
    ts: TestSubscriber[Any] = TestSubscriber(0)
    f.subscribe(ts)
    want = 0
    while want < total:
        want += step
        ts.request(step)
        if want <= total:
            ts.await_count(want, WAIT)
        assert len(ts.values) <= want  # rule 1.1 (also recorded as a violation)
    ts.await_done(WAIT)
    return _outcome(ts)


class _CancelAt(TestSubscriber[Any]):
    """Cancels from inside ``on_next`` once it holds ``k`` values (in the middle of a batch)."""

    __test__ = False

    def __init__(self, k: int) -> None:
        super().__init__()
        self._k = k

    def on_next(self, item: Any) -> None:
        super().on_next(item)
        if len(self.values) == self._k:
            self.cancel()


@pytest.mark.parametrize("step", [1, 3, 200])
@pytest.mark.parametrize(("name", "mode"), CASES)
def test_rule_1_1_requested_a_few_at_a_time(name: str, mode: str, step: int, batches: list[int]) -> None:
    want = _expected(name)
    if name == "switch_map(sync outer)":
        want = list(range(2000, 2000 + N))  # no demand before the outer ends: only the last inner is seen
    values, err, completions = _both(
        lambda b: _stepwise(OPS[name](_make_inner(mode, b)), step, len(want)), batches
    )
    assert (values, err, completions) == (want, None, 1)


@pytest.mark.parametrize("k", [1, 150, 333])
@pytest.mark.parametrize(("name", "mode"), CASES)
def test_rule_3_12_a_cancel_in_the_middle_of_a_batch_stops_there(
    name: str, mode: str, k: int, batches: list[int]
) -> None:
    cancels: list[int] = []

    def run(batched: bool) -> Outcome:
        make = _make_inner(mode, batched)

        def inner(data: Iterable[Any]) -> Flowable[Any]:
            return make(data).do_on_cancel(lambda: cancels.append(1))

        ts = _CancelAt(k)
        OPS[name](inner).subscribe(ts)
        ts.await_count(k, WAIT)
        assert ts.is_cancelled
        return _outcome(ts)

    values, err, completions = _both(run, batches)
    assert values == _expected(name)[:k] and err is None and completions == 0
    assert cancels, "the inner sources were not cancelled"


class _RawBatchPublisher:
    """A raw Publisher that ignores demand: it hands ``n`` elements at once, as a batch when the
    subscriber takes batches (``batched``), else one by one (a rule 1.1 breach either way)."""

    def __init__(self, n: int, batched: bool) -> None:
        self._n = n
        self._batched = batched

    def subscribe(self, s: Any) -> None:
        class Sub:
            def request(self, n: int) -> None:
                pass

            def cancel(self) -> None:
                pass

        s.on_subscribe(Sub())
        items = list(range(self._n))
        if self._batched and hasattr(s, "on_next_batch"):
            s.on_next_batch(items)
        else:
            for x in items:
                s.on_next(x)
        s.on_complete()


@pytest.mark.parametrize("name", ["concat_map_eager", "switch_map"])
def test_rule_1_1_an_overflowing_batch_gives_the_one_by_one_error(name: str) -> None:
    outs = []
    for batched in (True, False):
        src = Flowable.just(1)
        pub = _RawBatchPublisher(20, batched)

        def mapper(_: int, pub: _RawBatchPublisher = pub) -> Any:
            return pub

        if name == "concat_map_eager":
            f = src.concat_map_eager(mapper, prefetch=8)
        else:
            f = src.switch_map(mapper, prefetch=8)
        ts: TestSubscriber[Any] = TestSubscriber(3)  # the rest waits in the inner's queue
        f.subscribe(ts)
        ts.await_done(WAIT)
        outs.append(_outcome(ts))
    assert outs[0] == outs[1]
    values, err, completions = outs[0]
    assert values == [0, 1, 2]
    assert err is not None and err.startswith("MissingBackpressureError") and "rule 1.1" in err
    assert MissingBackpressureError.__name__ in err and completions == 0
