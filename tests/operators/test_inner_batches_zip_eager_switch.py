"""zip, concat_map_eager and switch_map take their inner sources' batches (the library-internal
``on_next_batch``: a fused synchronous source, or one behind ``observe_on``) and hand runs of rows or
elements to a batch-capable downstream in one call, with the signals of the one-by-one path.

Each scenario runs the same operator twice: batched (the inner sources straight into the operator)
and one by one (``do_on_next`` after each inner source takes no batches, so each element arrives
through ``on_next``), and compares what a TestSubscriber saw: unbounded, a few elements requested
at a time, a cancel in the middle of a batch, an inner error in the middle of a batch, a zipper that
raises or returns ``None`` in the middle of a run; always without rule violations. The rule tests
(``test_rule_*``: a few requested at a time, a cancel mid-batch, an overflowing batch) are in
``tests/spec/test_rules_inner_batches_zip_eager_switch.py``."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

from operators.harness import Boom
from rstreams import Flowable, plugins, schedulers
from rstreams.flowable.operators import _inner
from rstreams.testing import TestSubscriber

N = 600  # several prefetch batches (128, replenished by 96)
WAIT = 10.0

Inner = Callable[[Iterable[Any]], Flowable[Any]]


def _noop(_: object) -> None:
    pass


def _make_inner(mode: str, batched: bool, fail_at: int | None = None) -> Inner:
    """An inner source over ``data``: fused (``from_iterable``), hidden, or behind ``observe_on``; with
    ``fail_at``, a ``map`` raising ``Boom`` at that element (the batch path passes the elements
    before it on, then the error); one by one: ``do_on_next`` takes no batches."""

    def make(data: Iterable[Any]) -> Flowable[Any]:
        f: Flowable[Any] = Flowable.from_iterable(list(data))
        if fail_at is not None:
            f = f.map(lambda x: _raise(x) if x == fail_at else x)
        if mode == "async":
            f = f.observe_on(schedulers.single())
        elif mode == "hidden":
            f = f.hide()  # synchronous, not fused: the batches still pass
        return f if batched else f.do_on_next(_noop)

    return make


def _raise(x: Any) -> Any:
    raise Boom(f"at {x}")


Op = Callable[[Inner], Flowable[Any]]


def _zip2(inner: Inner) -> Flowable[Any]:
    return Flowable.zip(inner(range(N)), inner(range(0, 3 * N, 3)), operator.add)


def _zip_tuples(inner: Inner) -> Flowable[Any]:
    return Flowable.zip(inner(range(N)), inner(range(N, 2 * N)), inner(range(N - 50)))  # the shortest ends it


def _eager(inner: Inner) -> Flowable[Any]:
    return Flowable.range(0, 4).concat_map_eager(lambda i: inner(range(i * 1000, i * 1000 + N)), 2)


def _switch(inner: Inner) -> Flowable[Any]:
    return Flowable.just(7).switch_map(lambda i: inner(range(i, i + N)))


def _switch_sync_outer(inner: Inner) -> Flowable[Any]:
    # a synchronous outer switches through three inners; deterministic only with fused inners
    return Flowable.range(0, 3).switch_map(lambda i: inner(range(i * 1000, i * 1000 + N)))


OPS: dict[str, Op] = {
    "zip": _zip2,
    "zip(tuples, 3 sources)": _zip_tuples,
    "concat_map_eager": _eager,
    "switch_map": _switch,
}
# zip over fused sources folds into builtin zip at assembly (no inners): its synchronous case is hidden
CASES = [(name, mode) for name in OPS for mode in ("fused", "hidden", "async") if not (mode == "fused" and name.startswith("zip"))]
CASES += [("switch_map(sync outer)", "fused"), ("switch_map(sync outer)", "hidden")]
OPS["switch_map(sync outer)"] = _switch_sync_outer


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Sizes of the batches the inners took in one step."""
    seen: list[int] = []
    for cls in (_inner.PrefetchInner, _inner.QueuedInner):
        orig = cls.on_next_batch

        def spy(self: Any, items: list[Any], orig: Any = orig) -> None:
            seen.append(len(items))
            orig(self, items)

        monkeypatch.setattr(cls, "on_next_batch", spy)
    return seen


@pytest.fixture(autouse=True)
def _no_undeliverable() -> Iterator[None]:
    with plugins.collect_errors() as errors:
        yield
    assert not errors, f"undeliverable errors: {errors!r}"


Outcome = tuple[list[Any], str | None, int]


def _outcome(ts: TestSubscriber[Any]) -> Outcome:
    ts.assert_no_violations()
    err = ts.errors[0] if ts.errors else None
    return ts.values, None if err is None else f"{type(err).__name__}: {err}", ts.completions


def _unbounded(f: Flowable[Any]) -> Outcome:
    ts: TestSubscriber[Any] = f.test()
    ts.await_done(WAIT)
    return _outcome(ts)


def _both(run: Callable[[bool], Outcome], batches: list[int]) -> Outcome:
    batched = run(True)
    assert batches, "no inner took a batch"
    batches.clear()
    one_by_one = run(False)
    assert not batches, "the one-by-one path took batches"
    assert batched == one_by_one
    return batched


def _expected(name: str) -> list[Any]:
    return _unbounded(OPS[name](_make_inner("fused", False)))[0]


@pytest.mark.parametrize(("name", "mode"), CASES)
def test_unbounded_batched_and_one_by_one_give_the_same_signals(name: str, mode: str, batches: list[int]) -> None:
    values, err, completions = _both(lambda b: _unbounded(OPS[name](_make_inner(mode, b))), batches)
    assert err is None and completions == 1
    assert values == _expected(name) and len(values) >= N - 50


@pytest.mark.parametrize(("name", "mode"), CASES)
def test_an_inner_error_in_the_middle_of_a_batch(name: str, mode: str, batches: list[int]) -> None:
    """The error ends the stream eagerly (zip, switch_map, observe_on drop what is still queued):
    over synchronous inners the same values come first either way; across a thread, how many come
    first is a race, so both paths only give a prefix of the values and then the same error."""
    fail_at = 1000 + 200 if name.startswith(("concat_map_eager", "switch_map(sync")) else 200 + (7 if name == "switch_map" else 0)
    want = _expected(name)

    def run(batched: bool) -> Outcome:
        return _unbounded(OPS[name](_make_inner(mode, batched, fail_at)))

    if mode == "async":
        outs = [run(True), run(False)]
        for values, err, completions in outs:
            assert err == f"Boom: at {fail_at}" and completions == 0
            assert values == want[: len(values)]
        return
    values, err, completions = _both(run, batches)
    assert err == f"Boom: at {fail_at}" and completions == 0
    assert values == want[: len(values)]
    if name != "switch_map(sync outer)":  # its failing inner is replaced before it fails
        assert len(values) >= 96


@pytest.mark.parametrize("mode", ["hidden", "async"])
@pytest.mark.parametrize("outcome", ["raises", "returns None"])
@pytest.mark.parametrize("downstream", ["TestSubscriber", "to_list", "one by one to_list"])
def test_zipper_failing_in_the_middle_of_a_run(mode: str, outcome: str, downstream: str, batches: list[int]) -> None:
    calls: list[int] = []

    def zipper(a: int, b: int) -> int | None:
        calls.append(a)
        if a == 250:
            if outcome == "raises":
                raise Boom("zipper at 250")
            return None
        return a + b

    def run(batched: bool) -> Outcome:
        make = _make_inner(mode, batched)
        f: Flowable[Any] = Flowable.zip(make(range(N)), make(range(N)), zipper)
        if downstream == "to_list":
            f = f.to_list()
        elif downstream == "one by one to_list":
            f = f.do_on_next(_noop).to_list()
        return _unbounded(f)

    values, err, completions = _both(run, batches)
    want_err = "Boom: zipper at 250" if outcome == "raises" else "NoneElementError"
    assert err is not None and err.startswith(want_err) and completions == 0
    if downstream == "TestSubscriber":
        assert values == [2 * a for a in range(250)]
    else:
        assert values == []
    assert calls == list(range(251)) * 2  # each run: up to the failing row, never past it


@pytest.mark.parametrize("mode", ["hidden", "async"])
def test_zipper_calls_stop_at_a_one_by_one_consumer_that_stops(mode: str, batches: list[int]) -> None:
    """``take_while`` takes elements one by one: the zipper is called per row as the row goes out,
    never for the rest of a run the consumer no longer wants."""
    outs: list[tuple[Outcome, list[int]]] = []
    for batched in (True, False):
        calls: list[int] = []
        make = _make_inner(mode, batched)

        def zipper(a: int, b: int, calls: list[int] = calls) -> int:
            calls.append(a)
            return a + b

        f = Flowable.zip(make(range(N)), make(range(N)), zipper)
        outs.append((_unbounded(f.take_while(lambda v: v < 300)), calls))
    assert batches
    assert outs[0] == outs[1]
    (values, err, completions), calls = outs[0]
    assert values == [2 * a for a in range(150)] and err is None and completions == 1
    assert calls == list(range(151))


@pytest.mark.parametrize(("name", "mode"), CASES)
@pytest.mark.parametrize("consumer", ["reduce", "to_list"])
def test_batch_capable_downstream_gets_the_one_by_one_result(name: str, mode: str, consumer: str, batches: list[int]) -> None:
    def run(batched: bool) -> Outcome:
        f = OPS[name](_make_inner(mode, batched))
        if not batched:
            f = f.do_on_next(_noop)  # the operator's own output one by one too
        g = f.reduce(lambda a, b: a + b if isinstance(a, int) else a) if consumer == "reduce" else f.to_list()
        return _unbounded(g)

    values, err, completions = _both(run, batches)
    assert err is None and completions == 1
    want = _expected(name)
    assert values == ([want] if consumer == "to_list" else [_fold(want)])


def _fold(values: list[Any]) -> Any:
    acc = values[0]
    for v in values[1:]:
        acc = acc + v if isinstance(acc, int) else acc
    return acc


def test_pop_run_takes_exactly_k_in_order() -> None:
    from collections import deque

    q: deque[int] = deque(range(10))
    assert _inner.pop_run(q, 4) == [0, 1, 2, 3]
    assert list(q) == list(range(4, 10))
    assert _inner.pop_run(q, 0) == []
