"""The library-internal batch hand-off survives element-transparent stages.

``flat_map_iterable`` hands a batch consumer (an aggregate, ``observe_on``, an iterator bridge)
an inner iterable's elements as batches of at most the outstanding demand; the ``do_on_*`` stages
that only watch signals (complete, error, request, cancel, finally) pass batches on. Both must give
the signals the one-by-one path gives: the values are compared with the fused chain, the hidden
chain and a one-at-a-time TestSubscriber, and a batch never exceeds the demand (rule 1.1; the rule
tests, ``test_rule_*``, are in ``tests/spec/test_rules_batch_hand_off_transparent_stages.py``).
"""

from __future__ import annotations

from typing import Any

import pytest

from rstreams import Flowable, schedulers
from rstreams._spec import Subscription
from rstreams.testing import TestSubscriber

from .harness import check_scenarios, run_one_by_one


class _BatchProbe:
    """A batch consumer that requests ``step`` at a time and records each batch against the
    demand it had outstanding (what an aggregate or observe_on does, observed). It is marked as
    a library-internal subscriber (``_rs_no_wrap``) so that ``subscribe`` hands it the batches."""

    _rs_no_wrap = True

    def __init__(self, step: int) -> None:
        self.step = step
        self.outstanding = 0
        self.values: list[Any] = []
        self.batches: list[int] = []
        self.overruns: list[str] = []
        self.done = False
        self.error: BaseException | None = None
        self.sub: Subscription | None = None

    def on_subscribe(self, s: Subscription) -> None:
        self.sub = s
        self.outstanding = self.step
        s.request(self.step)

    def _took(self, k: int) -> None:
        if k > self.outstanding:
            self.overruns.append(f"{k} elements with {self.outstanding} requested (rule 1.1)")
        self.outstanding -= k
        if self.outstanding == 0 and self.sub is not None:
            self.outstanding = self.step
            self.sub.request(self.step)

    def on_next(self, x: Any) -> None:
        self.values.append(x)
        self._took(1)

    def on_next_batch(self, items: list[Any]) -> None:
        self.batches.append(len(items))
        self.values.extend(items)
        self._took(len(items))

    def on_error(self, e: BaseException) -> None:
        self.error = e

    def on_complete(self) -> None:
        self.done = True


def _inner(x: int) -> list[int]:
    return list(range(x * 10, x * 10 + x % 7))


DATA = list(range(200))
WANT = [v for x in DATA for v in _inner(x)]


def test_flat_map_iterable_batches_give_the_one_by_one_signals() -> None:
    check_scenarios(lambda f: f.flat_map_iterable(_inner), DATA, WANT)
    for src in (Flowable.from_iterable(DATA), Flowable.from_iterable(DATA).hide()):
        ts = src.flat_map_iterable(_inner).to_list().test()
        ts.assert_values(WANT).assert_complete().assert_no_violations()
        tso: TestSubscriber[int] = src.flat_map_iterable(_inner).observe_on(schedulers.single()).test()
        tso.await_done(5).assert_complete().assert_no_violations()
        assert tso.values == WANT
        one = run_one_by_one(src.flat_map_iterable(_inner).observe_on(schedulers.single()))
        one.await_done(5).assert_complete().assert_no_violations()
        assert one.values == WANT


def test_flat_map_iterable_batch_consumer_cancelling_mid_batch_stops_the_inner() -> None:
    pulled: list[int] = []

    def inner(x: int) -> Any:
        for i in range(1000):
            pulled.append(i)
            yield i

    ts = Flowable.just(1).hide().flat_map_iterable(inner).take(5).to_list().test()
    ts.assert_values(list(range(5))).assert_complete().assert_no_violations()
    assert len(pulled) <= 6, f"take(5) pulled {len(pulled)} elements of the inner iterable"


@pytest.mark.parametrize(
    "stage",
    [
        lambda f: f.do_on_complete(lambda: None),
        lambda f: f.do_on_error(lambda e: None),
        lambda f: f.do_on_request(lambda n: None),
        lambda f: f.do_on_cancel(lambda: None),
        lambda f: f.do_finally(lambda: None),
        lambda f: f.do_after_terminate(lambda: None),
        lambda f: f.do_on_subscribe(lambda s: None),
    ],
    ids=["complete", "error", "request", "cancel", "finally", "after_terminate", "subscribe"],
)
def test_signal_watching_do_on_stages_pass_batches_on(stage: Any) -> None:
    probe = _BatchProbe(64)
    stage(Flowable.from_iterable(DATA).hide().flat_map_iterable(_inner)).subscribe(probe)
    assert probe.done and probe.values == WANT and not probe.overruns
    assert max(probe.batches) > 1, "the stage turned the batch hand-off into single elements"
    check_scenarios(lambda f: stage(f.flat_map_iterable(_inner)), DATA, WANT)


def test_do_on_complete_runs_once_after_batches() -> None:
    seen: list[int] = []
    ts = Flowable.from_iterable(DATA).hide().flat_map_iterable(_inner).do_on_complete(lambda: seen.append(1)).to_list().test()
    ts.assert_values(WANT).assert_complete().assert_no_violations()
    assert seen == [1]


def test_do_on_next_stays_one_by_one_in_front_of_a_batch_consumer() -> None:
    probe = _BatchProbe(64)
    order: list[int] = []
    Flowable.from_iterable(DATA).hide().flat_map_iterable(_inner).do_on_next(order.append).subscribe(probe)  # type: ignore[arg-type]
    assert probe.values == WANT == order
    assert probe.batches == [], "do_on_next runs user code per element: it must not take batches"
    ts = Flowable.from_iterable(DATA).hide().flat_map_iterable(_inner).do_on_next(lambda x: None).to_list().test()
    ts.assert_values(WANT).assert_no_violations()
