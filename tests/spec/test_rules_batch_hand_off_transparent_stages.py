"""Reactive Streams rule tests (``test_rule_*``) of the batch hand-off through element-transparent
stages: flat_map_iterable's batches never exceed the demand (rule 1.1), and a ``None`` inside an inner
iterable is an error in a batch too (rule 2.13).

Their other tests (the one-by-one signals, the do_on_* stages) are in
``tests/operators/test_batch_hand_off_transparent_stages.py``."""

from __future__ import annotations

import pytest

from operators.test_batch_hand_off_transparent_stages import DATA, WANT, _BatchProbe, _inner
from rstreams import Flowable
from rstreams.errors import NoneElementError


@pytest.mark.parametrize("step", [1, 3, 50, 2**63 - 1])
def test_rule_1_1_flat_map_iterable_batches_never_exceed_the_demand(step: int) -> None:
    probe = _BatchProbe(step)
    Flowable.from_iterable(DATA).hide().flat_map_iterable(_inner).subscribe(probe)  # type: ignore[arg-type]
    assert probe.done and probe.error is None
    assert probe.values == WANT
    assert not probe.overruns
    assert probe.batches, "the batch consumer got no batch: the hand-off is not used"
    if step == 1:
        assert set(probe.batches) == {1}


def test_rule_2_13_a_none_inside_an_inner_iterable_is_an_error_in_a_batch_too() -> None:
    for src in (Flowable.from_iterable([1, 2]), Flowable.from_iterable([1, 2]).hide()):
        ts = src.flat_map_iterable(lambda x: [x, None] if x == 2 else [x]).to_list().test()
        ts.assert_error(NoneElementError).assert_no_violations()
        probe = _BatchProbe(2**63 - 1)
        src.flat_map_iterable(lambda x: [x, None] if x == 2 else [x]).subscribe(probe)  # type: ignore[arg-type]
        assert isinstance(probe.error, NoneElementError)
