"""sequence_equal (one bool; bounded prefetch; both sources cancelled once decided) and the
single-element checks single, single_or_error, first_or_error, last_or_error."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable, plugins, schedulers
from rstreams.errors import NoneElementError, NoSuchElementError
from rstreams.testing import TestPublisher, TestSubscriber, Violation

from .harness import Boom, check_scenarios

MAX = 2**63 - 1


def seq(a: Any, b: Any, **kw: Any) -> Flowable[bool]:
    return Flowable.sequence_equal(a, b, **kw)


# ----------------------------------------------------------------------------------------------
# sequence_equal: answers


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        ([], [], True),
        ([1, 2, 3], [1, 2, 3], True),
        ([1, 2, 3], [1, 2], False),
        ([1, 2], [1, 2, 3], False),
        ([], [1], False),
        ([1], [], False),
        ([1, 2, 3], [1, 9, 3], False),
        (list(range(1000)), list(range(1000)), True),
        (list(range(1000)), list(range(999)) + [0], False),
    ],
)
def test_answers_over_fused_and_hidden_sources(a: list[int], b: list[int], want: bool) -> None:
    for fa in (Flowable.from_iterable(a), Flowable.from_iterable(a).hide()):
        for fb in (Flowable.from_iterable(b), Flowable.from_iterable(b).hide()):
            seq(fa, fb).test().assert_result(want).assert_no_violations()
            seq(fb, fa).test().assert_result(want).assert_no_violations()


@pytest.mark.parametrize("data", [[], [5], list(range(10))], ids=["empty", "one", "range"])
def test_scenarios_as_the_first_and_the_second_source(data: list[int]) -> None:
    other = Flowable.from_iterable(data)
    check_scenarios(lambda f: seq(f, other), data, [True])
    check_scenarios(lambda f: seq(other, f), data, [True])
    check_scenarios(lambda f: seq(f, other.concat_with(Flowable.just(99))), data, [False])


def test_default_equality_is_identity_then_eq() -> None:
    nan = float("nan")
    seq(Flowable.just(nan, 1), Flowable.just(nan, 1.0)).test().assert_result(True).assert_no_violations()
    seq(Flowable.just(float("nan")), Flowable.just(float("nan"))).test().assert_result(False).assert_no_violations()


def test_custom_equal() -> None:
    seq(Flowable.just("a", "B"), Flowable.just("A", "b"), equal=lambda x, y: x.lower() == y.lower()).test().assert_result(
        True
    ).assert_no_violations()
    seq(Flowable.just(1, 2), Flowable.just(1, 2), equal=lambda x, y: 0).test().assert_result(False).assert_no_violations()


def test_asynchronous_sources_on_two_threads() -> None:
    n = 20_000
    for _ in range(5):
        a = Flowable.range(0, n).subscribe_on(schedulers.io())
        b = Flowable.range(0, n).observe_on(schedulers.computation())
        ts = seq(a, b, prefetch=16).test()
        ts.await_done(10)
        ts.assert_result(True).assert_no_violations()
        c = Flowable.range(0, n).map(lambda x: -1 if x == n - 1 else x).subscribe_on(schedulers.io())
        ts = seq(a, c, prefetch=16).test()
        ts.await_done(10)
        ts.assert_result(False).assert_no_violations()


# ----------------------------------------------------------------------------------------------
# sequence_equal: demand and cancellation


def test_memory_is_bounded_by_prefetch_when_one_side_is_silent() -> None:
    emitted: list[int] = []
    tp: TestPublisher[int] = TestPublisher.create()
    ts = seq(Flowable.range(0, 10**9).hide().do_on_next(emitted.append), tp, prefetch=16).test()
    assert len(emitted) == 16
    ts.assert_no_values().assert_not_complete()
    tp.next(0, 1, 2)
    assert len(emitted) == 16  # 3 compared: less than the replenish batch of 12
    ts.cancel()
    assert tp.was_cancelled
    ts.assert_no_values().assert_no_violations()


def test_both_sources_are_cancelled_once_decided() -> None:
    ca: list[bool] = []
    cb: list[bool] = []
    a = Flowable.range(0, 10**9).hide().do_on_cancel(lambda: ca.append(True))
    b = Flowable.range(0, 10**9).hide().map(lambda x: -1 if x == 500 else x).do_on_cancel(lambda: cb.append(True))
    seq(a, b).test().assert_result(False).assert_no_violations()
    assert ca == [True] and cb == [True]


def test_the_shorter_source_decides_as_soon_as_the_other_has_one_more() -> None:
    ta: TestPublisher[int] = TestPublisher.create()
    tb: TestPublisher[int] = TestPublisher.create()
    ts = seq(ta, tb).test()
    ta.next(1, 2)
    tb.next(1)
    ts.assert_no_values()
    tb.complete()
    ts.assert_result(False).assert_no_violations()
    assert ta.was_cancelled


def test_the_answer_waits_for_a_request() -> None:
    ts = seq(Flowable.just(1).hide(), Flowable.just(1).hide()).test(0)
    ts.assert_no_values().assert_not_complete()
    ts.request(1)
    ts.assert_result(True).assert_no_violations()


# ----------------------------------------------------------------------------------------------
# sequence_equal: errors


def test_an_error_of_either_source_cancels_the_other() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    seq(Flowable.error(Boom("a")), tp).test().assert_error(Boom).assert_no_violations()
    assert not tp.has_subscribers  # never subscribed: the first source had failed already
    ta: TestPublisher[int] = TestPublisher.create()
    ts = seq(ta, Flowable.concat(Flowable.just(1), Flowable.error(Boom("b")))).test()
    ts.assert_error(Boom).assert_no_violations()
    assert ta.was_cancelled


def test_a_raising_equal_fails_and_cancels_both() -> None:
    ca: list[bool] = []
    cb: list[bool] = []

    def equal(x: int, y: int) -> bool:
        if x == 3:
            raise Boom("equal")
        return x == y

    a = Flowable.range(0, 10**9).hide().do_on_cancel(lambda: ca.append(True))
    b = Flowable.range(0, 10**9).hide().do_on_cancel(lambda: cb.append(True))
    seq(a, b, equal=equal).test().assert_no_values().assert_error(Boom).assert_no_violations()
    assert ca == [True] and cb == [True]


def test_an_error_after_the_answer_goes_to_the_hook() -> None:
    # a source that keeps signalling after the cancel: its late error must not vanish
    ta: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    with plugins.collect_errors() as errors:
        ts = seq(ta, Flowable.empty()).test()
        ta.next(1)
        ts.assert_result(False)
        ta.error(Boom("late"))
    assert len(errors) == 1
    ts.assert_no_violations()


def test_bad_arguments() -> None:
    with pytest.raises(NoneElementError):
        Flowable.sequence_equal(None, Flowable.empty())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.sequence_equal(Flowable.empty(), [1, 2])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.sequence_equal(Flowable.empty(), Flowable.empty(), equal=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Flowable.sequence_equal(Flowable.empty(), Flowable.empty(), prefetch=0)
    with pytest.raises(TypeError):
        Flowable.sequence_equal(Flowable.empty(), Flowable.empty(), prefetch=True)


# ----------------------------------------------------------------------------------------------
# single / single_or_error / first_or_error / last_or_error


SINGLE_OPS: list[tuple[str, Any, Any]] = [
    ("single(-1)", lambda f: f.single(-1), lambda d: d if len(d) == 1 else [-1]),
    ("single_or_error", lambda f: f.single_or_error(), lambda d: d),
    ("first_or_error", lambda f: f.first_or_error(), lambda d: d[:1]),
    ("last_or_error", lambda f: f.last_or_error(), lambda d: d[-1:]),
]


@pytest.mark.parametrize(("name", "op", "model"), SINGLE_OPS, ids=[o[0] for o in SINGLE_OPS])
def test_single_element_scenarios(name: str, op: Any, model: Any) -> None:
    check_scenarios(op, [5], model)


def test_single_default_for_an_empty_stream() -> None:
    check_scenarios(lambda f: f.single(-1), [], [-1])


@pytest.mark.parametrize(
    "op", [lambda f: f.single_or_error(), lambda f: f.first_or_error(), lambda f: f.last_or_error()],
    ids=["single_or_error", "first_or_error", "last_or_error"],
)
def test_no_such_element_for_an_empty_stream(op: Any) -> None:
    for src in (Flowable.empty(), Flowable.empty().hide()):
        op(src).test().assert_no_values().assert_error(NoSuchElementError).assert_no_violations()


@pytest.mark.parametrize("op", [lambda f: f.single(0), lambda f: f.single_or_error()], ids=["single", "single_or_error"])
def test_a_second_element_is_a_value_error_and_cancels_after_two(op: Any) -> None:
    computed: list[int] = []
    fused = Flowable.range(0, 10**9).map(lambda x: computed.append(x) or x)
    op(fused).test().assert_no_values().assert_error(ValueError, match="more than one").assert_no_violations()
    assert computed == [0, 1]
    cancelled: list[bool] = []
    emitted: list[int] = []
    hidden = Flowable.range(0, 10**9).hide().do_on_next(emitted.append).do_on_cancel(lambda: cancelled.append(True))
    op(hidden).test().assert_no_values().assert_error(ValueError).assert_no_violations()
    assert emitted == [0, 1] and cancelled == [True]


def test_single_over_a_boundary_batch() -> None:
    for n, want in ((1, [0]), (0, [-1])):
        ts = Flowable.range(0, n).observe_on(schedulers.single()).single(-1).test()
        ts.await_done(5).assert_result(*want).assert_no_violations()
    ts = Flowable.range(0, 5).observe_on(schedulers.single()).single(-1).test()
    ts.await_done(5).assert_error(ValueError).assert_no_violations()


def test_first_or_error_cancels_at_the_first_element() -> None:
    cancelled: list[bool] = []
    Flowable.range(0, 10**9).hide().do_on_cancel(lambda: cancelled.append(True)).first_or_error().test().assert_result(
        0
    ).assert_no_violations()
    assert cancelled == [True]


@pytest.mark.parametrize(("name", "op", "model"), SINGLE_OPS, ids=[o[0] for o in SINGLE_OPS])
def test_single_element_ops_wait_for_demand_and_reject_bad_requests(name: str, op: Any, model: Any) -> None:
    ts = op(Flowable.just(4).hide()).test(0)
    ts.assert_no_values().assert_not_complete()
    ts.request(1)
    ts.assert_result(4).assert_no_violations()
    op(Flowable.just(4)).test(0).request(0).assert_error(ValueError, match="3.9").assert_no_violations()


@pytest.mark.parametrize(("name", "op", "model"), SINGLE_OPS, ids=[o[0] for o in SINGLE_OPS])
def test_single_element_ops_pass_upstream_errors(name: str, op: Any, model: Any) -> None:
    op(Flowable.error(Boom("x"))).test().assert_error(Boom).assert_no_violations()


def test_single_default_none_is_refused_at_assembly() -> None:
    with pytest.raises(NoneElementError):
        Flowable.just(1).single(None)  # type: ignore[arg-type]


def test_single_request_vs_complete_race() -> None:
    for _ in range(50):
        tp: TestPublisher[int] = TestPublisher.create()
        ts: TestSubscriber[int] = TestSubscriber(0)
        Flowable.from_publisher(tp).single_or_error().subscribe(ts)
        tp.next(3)
        t = threading.Thread(target=tp.complete)
        t.start()
        ts.request(1)
        t.join(5)
        ts.await_done(5).assert_result(3).assert_no_violations()


@settings(max_examples=150, deadline=None)
@given(
    a=st.lists(st.integers(0, 3), max_size=40),
    b=st.lists(st.integers(0, 3), max_size=40),
    prefetch=st.integers(1, 9),
    hide_a=st.booleans(),
    hide_b=st.booleans(),
)
def test_property_the_answer_is_list_equality(a: list[int], b: list[int], prefetch: int, hide_a: bool, hide_b: bool) -> None:
    fa = Flowable.from_iterable(a)
    fb = Flowable.from_iterable(b)
    ts = seq(fa.hide() if hide_a else fa, fb.hide() if hide_b else fb, prefetch=prefetch).test()
    ts.assert_result(a == b).assert_no_violations()


def test_an_error_racing_the_other_sources_completion_is_never_taken_for_a_completion() -> None:
    # a's error and b's completion come from two threads; a drain on b's thread that saw a "done"
    # with an empty queue before a's error was stored would answer True
    for _ in range(200):
        a = Flowable.concat(Flowable.range(0, 3), Flowable.error(Boom("a"))).subscribe_on(schedulers.io())
        b = Flowable.range(0, 3).subscribe_on(schedulers.io())
        ts = seq(a, b).test()
        ts.await_done(5)
        ts.assert_no_values().assert_error(Boom).assert_no_violations()


def test_first_or_error_and_last_or_error_name_themselves_when_empty() -> None:
    from rstreams.errors import NoSuchElementError

    for src in (Flowable.empty(), Flowable.empty().hide()):
        src.first_or_error().test().assert_error(NoSuchElementError, match=r"^first_or_error\(\)").assert_no_violations()
        src.last_or_error().test().assert_error(NoSuchElementError, match=r"^last_or_error\(\)").assert_no_violations()
