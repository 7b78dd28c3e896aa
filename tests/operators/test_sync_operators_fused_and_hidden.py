"""The synchronous operators against RxJava 3's documented semantics and the rules.

Each test pins one behaviour an RxJava user relies on, checked on the fused path (a ``range`` /
``from_iterable`` / ``just`` chain, folded at assembly) and on the hidden path (``.hide()``), with
request(1) at a time where demand matters. Every test ends with ``assert_no_violations()``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rstreams import Flowable, plugins
from rstreams.errors import NoneElementError, NoSuchElementError
from rstreams.testing import TestPublisher, TestSubscriber
from rstreams.testing._test_publisher import Violation

from .harness import Boom, check_raising, check_scenarios

MAX = 2**63 - 1

Op = Callable[[Flowable[Any]], Flowable[Any]]


class _Gen:
    """An iterable without a length: each ``iter()`` is a fresh generator (a lazy source)."""

    def __init__(self, data: list[Any]) -> None:
        self.data = data

    def __iter__(self) -> Iterator[Any]:
        return (x for x in self.data)


def sources(data: list[Any]) -> list[tuple[str, Flowable[Any]]]:
    """The same elements through every kind of synchronous source, fused and hidden."""
    return [
        ("fused list", Flowable.from_iterable(data)),
        ("hidden list", Flowable.from_iterable(data).hide()),
        ("fused generator", Flowable.from_iterable(_Gen(data))),
        ("hidden generator", Flowable.from_iterable(_Gen(data)).hide()),
    ]


def trace(f: Flowable[Any], pattern: list[int]) -> list[tuple[list[Any], int, list[str]]]:
    """The signals seen after subscribing and after each request of ``pattern``."""
    ts: TestSubscriber[Any] = TestSubscriber(0)
    f.subscribe(ts)
    out = [(list(ts.values), ts.completions, [type(e).__name__ for e in ts.errors])]
    for n in pattern:
        ts.request(n)
        out.append((list(ts.values), ts.completions, [type(e).__name__ for e in ts.errors]))
    ts.assert_no_violations()
    return out


def assert_same_everywhere(op: Op, data: list[Any], pattern: list[int]) -> None:
    """Fused and hidden, list and generator sources: the same signals after every request."""
    with plugins.collect_errors() as undeliverable:
        traces = {name: trace(op(src), pattern) for name, src in sources(data)}
    want = traces["hidden list"]
    for name, got in traces.items():
        assert got == want, f"{name}: {got} != hidden list: {want}"
    assert not undeliverable, undeliverable


def raise_on(bad: Any, result: Callable[..., Any] = lambda *a: a[-1]) -> Callable[..., Any]:
    """A user function that raises Boom for the element ``bad``, else returns ``result(*args)``."""

    def fn(*args: Any) -> Any:
        if args[-1] == bad:
            raise Boom(f"callback failed on {bad!r}")
        return result(*args)

    return fn


# ----------------------------------------------------------------------------------------------
# Fusion must not run user code ahead of demand (fused == hidden)


def test_fused_map_is_not_called_for_an_element_nobody_requested() -> None:
    # RxJava: fromIterable(...).filter(p).map(f) calls f once per requested element; the fused
    # driver used to pull one element ahead (to complete eagerly) and ran f (and p) for it
    for name, src in sources([1, 2, 3]):
        calls: list[int] = []
        ts: TestSubscriber[int] = TestSubscriber(0)
        src.filter(lambda x: True).map(lambda x, calls=calls: calls.append(x) or x).subscribe(ts)
        ts.request(1)
        assert calls == [1], f"{name}: mapper called for {calls}"
        ts.assert_values(1).assert_not_complete().assert_no_errors().assert_no_violations()


def test_fused_raising_mapper_on_an_unrequested_element_is_not_signalled() -> None:
    for _name, src in sources([1, 2, 3]):
        ts: TestSubscriber[int] = TestSubscriber(0)
        src.filter(lambda x: x > 0).map(raise_on(2)).subscribe(ts)
        ts.request(1)
        ts.assert_values(1).assert_no_errors().assert_not_complete()
        ts.request(1)
        ts.assert_error(Boom).assert_values(1).assert_no_violations()


def test_fused_predicate_is_not_called_ahead_of_demand() -> None:
    for name, src in sources([1, 2, 3, 4]):
        seen: list[int] = []

        def keep(x: int, seen: list[int] = seen) -> bool:
            seen.append(x)
            return True

        ts: TestSubscriber[int] = TestSubscriber(2)
        src.take_while(keep).subscribe(ts)
        ts.assert_values(1, 2).assert_not_complete().assert_no_violations()
        assert seen == [1, 2], f"{name}: predicate called for {seen}"


def test_fused_completes_eagerly_once_the_source_is_exhausted() -> None:
    # the exact demand consumed the last element: completion follows without another request
    for _name, src in sources([1, 2, 3]):
        ts: TestSubscriber[int] = TestSubscriber(3)
        src.filter(lambda x: x > 0).map(lambda x: x * 10).subscribe(ts)
        ts.assert_result(10, 20, 30).assert_no_violations()


def test_fused_take_until_completes_right_after_the_matching_element() -> None:
    # RxJava: takeUntil(predicate) emits the element, tests it, then completes at once
    for _name, src in sources([1, 2, 3]):
        ts: TestSubscriber[int] = TestSubscriber(1)
        src.take_until(lambda x: x == 1).subscribe(ts)
        ts.assert_result(1).assert_no_violations()
        ts2: TestSubscriber[int] = TestSubscriber(1)
        src.filter(lambda x: True).take_until(lambda x: x == 1).subscribe(ts2)
        ts2.assert_result(1).assert_no_violations()


def test_fused_take_completes_at_n_over_a_filtered_source() -> None:
    for _name, src in sources(list(range(10))):
        ts: TestSubscriber[int] = TestSubscriber(2)
        src.filter(lambda x: x % 2 == 1).take(2).subscribe(ts)
        ts.assert_result(1, 3).assert_no_violations()


def test_empty_source_under_a_filter_completes_at_subscription() -> None:
    # RxJava's fromIterable checks hasNext() at subscription: an empty stream completes at once
    for _name, src in sources([]):
        ts: TestSubscriber[int] = TestSubscriber(0)
        src.filter(lambda x: True).take(2).subscribe(ts)
        ts.assert_result().assert_no_violations()


def test_empty_source_under_a_seeded_scan_still_waits_for_the_seed_request() -> None:
    for _name, src in sources([]):
        ts: TestSubscriber[int] = TestSubscriber(0)
        src.filter(lambda x: True).scan(lambda a, b: a + b, 7).subscribe(ts)
        ts.assert_no_values().assert_not_complete()
        ts.request(1)
        ts.assert_result(7).assert_no_violations()


OPS: dict[str, Op] = {
    "map": lambda f: f.map(lambda x: x * 2),
    "map raising": lambda f: f.map(raise_on(3)),
    "filter": lambda f: f.filter(lambda x: x % 2 == 0),
    "filter raising": lambda f: f.filter(raise_on(3, lambda x: x % 2 == 0)),
    "scan": lambda f: f.scan(lambda a, b: a + b),
    "scan seed": lambda f: f.scan(lambda a, b: a + b, 100),
    "scan raising": lambda f: f.scan(raise_on(3, lambda a, b: a + b)),
    "buffer(2)": lambda f: f.buffer(2),
    "buffer(3, 1)": lambda f: f.buffer(3, 1),
    "buffer(2, 3)": lambda f: f.buffer(2, 3),
    "take(3)": lambda f: f.take(3),
    "take(20)": lambda f: f.take(20),
    "skip(2)": lambda f: f.skip(2),
    "take_last(2)": lambda f: f.take_last(2),
    "skip_last(2)": lambda f: f.skip_last(2),
    "take_while": lambda f: f.take_while(lambda x: x < 3),
    "take_while raising": lambda f: f.take_while(raise_on(3, lambda x: True)),
    "skip_while": lambda f: f.skip_while(lambda x: x < 3),
    "take_until": lambda f: f.take_until(lambda x: x == 3),
    "take_until raising": lambda f: f.take_until(raise_on(3, lambda x: False)),
    "distinct(key)": lambda f: f.distinct(lambda x: x % 3),
    "distinct_until_changed(key)": lambda f: f.distinct_until_changed(lambda x: x // 2),
    "distinct_until_changed(comparer)": lambda f: f.distinct_until_changed(comparer=lambda a, b: abs(a - b) < 2),
    "element_at(1)": lambda f: f.element_at(1),
    "first": lambda f: f.first(),
    "last": lambda f: f.last(),
    "default_if_empty": lambda f: f.default_if_empty(9),
    "start_with": lambda f: f.start_with(7, 8),
    "concat_map": lambda f: f.concat_map(lambda x: Flowable.range(0, x % 3)),
    "flat_map_iterable": lambda f: f.flat_map_iterable(lambda x: range(x % 3)),
    "reduce": lambda f: f.reduce(lambda a, b: a + b),
    "count": lambda f: f.count(),
    "repeat(2)": lambda f: f.repeat(2),
    "map.filter": lambda f: f.map(lambda x: x + 1).filter(lambda x: x % 3),
    "filter.take(2)": lambda f: f.filter(lambda x: x % 2).take(2),
    "filter.take_last(2)": lambda f: f.filter(lambda x: x % 2).take_last(2),
    "skip.take": lambda f: f.skip(1).take(3),
    "map.buffer": lambda f: f.map(lambda x: x).buffer(2),
    "flat_map_iterable.map": lambda f: f.flat_map_iterable(lambda x: [x, x]).map(lambda x: -x),
    "filter.scan seed": lambda f: f.filter(lambda x: x > 1).scan(lambda a, b: a + b, 0),
    "skip_while.buffer": lambda f: f.skip_while(lambda x: x < 2).buffer(2),
    "take_while.concat_with": lambda f: f.take_while(lambda x: x < 4).concat_with(Flowable.just(-1)),
    "filter.start_with": lambda f: f.filter(lambda x: x > 0).start_with(-2, -1),
    "filter.repeat(2)": lambda f: f.filter(lambda x: x > 0).repeat(2),
    "concat of filters": lambda f: Flowable.concat(f.filter(lambda x: x % 2), f.filter(lambda x: x % 2 == 0)),
    "map.start_with.filter": lambda f: f.map(lambda x: x * 3).start_with(-1).filter(lambda x: x % 2),
    "map.repeat(2).take_while": lambda f: f.map(lambda x: x + 1).repeat(2).take_while(lambda x: x < 5),
    "take(3).distinct()": lambda f: f.take(3).distinct(),
    "take(4).filter": lambda f: f.take(4).filter(lambda x: x % 2 == 0),
    "map.take(3).skip_while": lambda f: f.map(lambda x: x).take(3).skip_while(lambda x: x < 1),
    "zip(filter, range) with a zipper": lambda f: Flowable.zip(
        f.filter(lambda x: x != 2), Flowable.range(0, 4), lambda a, b: a * 10 + b
    ),
}


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("data", [[], [1], [0, 1, 2, 3, 4, 5], [3, 3, 1, 1, 2, 3, 3, 0]])
@pytest.mark.parametrize("pattern", [[1] * 12, [2] * 6, [3, MAX]])
def test_fused_and_hidden_signal_the_same_after_every_request(name: str, data: list[int], pattern: list[int]) -> None:
    assert_same_everywhere(OPS[name], data, pattern)


# ----------------------------------------------------------------------------------------------
# Signals after a terminal signal (a faulty upstream): never passed on, errors to the plugins


def test_on_error_return_item_none_fails_at_assembly() -> None:
    # RxJava: onErrorReturnItem(null) throws NullPointerException at assembly
    with pytest.raises(NoneElementError):
        Flowable.just(1).on_error_return_item(None)  # type: ignore[arg-type]
    ts = Flowable.error(Boom()).on_error_return_item(5).test()
    ts.assert_result(5).assert_no_violations()


def test_first_on_empty_is_no_such_element_on_both_paths() -> None:
    for _name, src in sources([]):
        src.first().test().assert_error(NoSuchElementError).assert_no_violations()


class _CancelOnFirst(TestSubscriber[Any]):
    """Cancels from inside its first on_next."""

    def on_next(self, item: Any) -> None:
        super().on_next(item)
        self.cancel()


def test_take_until_predicate_not_called_after_cancel_inside_on_next() -> None:
    for _name, src in sources([0, 1]):
        seen: list[int] = []
        ts = _CancelOnFirst()
        src.take_until(lambda x, seen=seen: seen.append(x) or False).subscribe(ts)
        ts.assert_values(0).assert_not_complete().assert_no_violations()
        assert seen == []


def test_none_seed_and_contains_none_fail_at_assembly_with_none_element_error() -> None:
    with pytest.raises(NoneElementError):
        Flowable.just(1).reduce(lambda a, b: a + b, None)
    with pytest.raises(NoneElementError):
        Flowable.just(1).contains(None)
    with pytest.raises(NoneElementError):
        Flowable.just(1).scan(lambda a, b: a + b, None)
    Flowable.just(1).reduce(lambda a, b: a + b, 0).test().assert_result(1).assert_no_violations()


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("data", [[], [2], [0, 1, 2, 3, 4, 5, 6]])
def test_harness_scenarios_agree_with_the_unbounded_hidden_run(name: str, data: list[int]) -> None:
    # plain, hidden, request(1) at a time, cancelled mid-stream and upstream error all emit a
    # prefix of (or exactly) what the hidden path emits under unbounded demand
    ref = OPS[name](Flowable.from_iterable(data).hide()).test()
    ref.assert_no_violations()
    if ref.errors:
        if isinstance(ref.errors[0], Boom):
            check_raising(OPS[name], data)
        else:  # first() over an empty stream: the same error on every path
            for _src_name, src in sources(data):
                OPS[name](src).test().assert_error(type(ref.errors[0])).assert_no_violations()
        return
    check_scenarios(OPS[name], data, list(ref.values))


def test_retry_when_handler_returning_a_non_publisher_fails_the_stream() -> None:
    with plugins.collect_errors() as undeliverable:
        ts = Flowable.just(1).retry_when(lambda errors: 5).test()  # type: ignore[arg-type,return-value]
    ts.assert_error(TypeError).assert_no_values().assert_no_violations()
    assert not undeliverable


def test_using_source_fn_returning_a_non_publisher_fails_and_disposes() -> None:
    disposed: list[int] = []
    with plugins.collect_errors() as undeliverable:
        ts = Flowable.using(lambda: 1, lambda r: 5, disposed.append).test()  # type: ignore[arg-type,return-value]
    ts.assert_error(TypeError).assert_no_values().assert_no_violations()
    assert disposed == [1]
    assert not undeliverable


AGGREGATES: dict[str, tuple[Op, Any]] = {
    "reduce": (lambda f: f.reduce(lambda a, b: a + b), 6),
    "reduce seed": (lambda f: f.reduce(lambda a, b: a + b, 10), 16),
    "collect": (lambda f: f.collect(list, list.append), [1, 2, 3]),
    "to_list": (lambda f: f.to_list(), [1, 2, 3]),
    "to_dict": (lambda f: f.to_dict(lambda x: x % 2), {1: 3, 0: 2}),
    "count": (lambda f: f.count(), 3),
    "all": (lambda f: f.all(lambda x: x > 0), True),
    "any": (lambda f: f.any(lambda x: x > 5), False),
    "contains": (lambda f: f.contains(2), True),
    "last": (lambda f: f.last(), 3),
    "element_at(1)": (lambda f: f.element_at(1), 2),
    "first": (lambda f: f.first(), 1),
}


@pytest.mark.parametrize("name", sorted(AGGREGATES))
def test_single_valued_results_late_error_goes_to_the_plugins(name: str) -> None:
    op, _want = AGGREGATES[name]
    with plugins.collect_errors() as undeliverable:
        tp: TestPublisher[int] = TestPublisher.create_noncompliant(
            Violation.CLEANUP_ON_TERMINATE, Violation.REQUEST_OVERFLOW, Violation.DEFER_CANCELLATION
        )
        ts: TestSubscriber[Any] = TestSubscriber()
        op(Flowable.from_publisher(tp)).subscribe(ts)
        tp.next(1, 2, 3)
        tp.complete()
        tp.error(KeyError("late"))
    assert ts.completions == 1
    ts.assert_value_count(1).assert_no_errors().assert_no_violations()
    assert any(isinstance(e, KeyError) for e in undeliverable), "the late error was lost"


def test_fused_concat_of_mapped_chains_under_a_filter_maps_only_requested_elements() -> None:
    for hide in (False, True):
        calls: list[int] = []
        first = Flowable.just(1, 2).map(lambda x, calls=calls: calls.append(x) or x)
        if hide:
            first = first.hide()
        ts: TestSubscriber[int] = TestSubscriber(1)
        Flowable.concat(first, Flowable.just(3)).filter(lambda x: True).subscribe(ts)
        ts.assert_values(1).assert_not_complete().assert_no_violations()
        assert calls == [1], f"hide={hide}: mapper called for {calls}"
        ts.request(2)
        ts.assert_result(1, 2, 3).assert_no_violations()


def test_flat_map_iterable_upstream_error_after_cancel_goes_to_the_plugins() -> None:
    with plugins.collect_errors() as undeliverable:
        tp: TestPublisher[int] = TestPublisher.create_noncompliant(
            Violation.REQUEST_OVERFLOW, Violation.DEFER_CANCELLATION
        )
        ts: TestSubscriber[int] = TestSubscriber()
        Flowable.from_publisher(tp).flat_map_iterable(lambda x: [x]).subscribe(ts)
        tp.next(0)
        ts.cancel()
        tp.error(KeyError("late"))
    ts.assert_values(0).assert_no_errors().assert_not_complete().assert_no_violations()
    assert any(isinstance(e, KeyError) for e in undeliverable), "the error was lost"


def test_scan_seed_error_after_cancel_before_the_seed_goes_to_the_plugins() -> None:
    with plugins.collect_errors() as undeliverable:
        tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
        ts: TestSubscriber[int] = TestSubscriber(0)
        Flowable.from_publisher(tp).scan(lambda a, b: a + b, 0).subscribe(ts)
        ts.cancel()
        tp.error(KeyError("late"))
    ts.assert_no_values().assert_no_errors().assert_no_violations()
    assert any(isinstance(e, KeyError) for e in undeliverable), "the error was lost"


# ----------------------------------------------------------------------------------------------
# RxJava 3's documented semantics, pinned on every source kind


def both_paths(data: list[Any]) -> list[tuple[str, Flowable[Any]]]:
    return sources(data)


def test_scan_with_seed_emits_the_seed_first_under_one_unit_of_demand() -> None:
    for _name, src in both_paths([1, 2, 3]):
        ts: TestSubscriber[int] = TestSubscriber(1)
        src.scan(lambda a, b: a + b, 10).subscribe(ts)
        ts.assert_values(10).assert_not_complete()
        ts.request(3)
        ts.assert_result(10, 11, 13, 16).assert_no_violations()
        src.scan(lambda a, b: a + b).test().assert_result(1, 3, 6).assert_no_violations()


@pytest.mark.parametrize(
    ("count", "skip", "want"),
    [
        (3, 1, [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4], [4]]),
        (2, 3, [[0, 1], [3, 4]]),
        (2, 2, [[0, 1], [2, 3], [4]]),
        (5, 5, [[0, 1, 2, 3, 4]]),
    ],
)
def test_buffer_count_skip_shapes(count: int, skip: int, want: list[list[int]]) -> None:
    for _name, src in both_paths(list(range(5))):
        src.buffer(count, skip).test().assert_result(*want).assert_no_violations()


def test_take_zero_completes_at_once_and_cancels_the_upstream() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_publisher(tp).take(0).subscribe(ts)
    ts.assert_result().assert_no_violations()
    assert tp.was_cancelled and tp.request_calls == []
    for _name, src in both_paths([1, 2]):
        ts2: TestSubscriber[int] = TestSubscriber(0)
        src.take(0).subscribe(ts2)
        ts2.assert_result().assert_no_violations()


def test_element_at_semantics() -> None:
    with pytest.raises(ValueError):
        Flowable.just(1).element_at(-1)
    with pytest.raises(ValueError):
        Flowable.just(1).element_at_or_error(-1)
    for _name, src in both_paths([1, 2, 3]):
        src.element_at(2).test().assert_result(3).assert_no_violations()
        src.element_at(3).test().assert_result().assert_no_violations()
        src.element_at(3, 9).test().assert_result(9).assert_no_violations()
        src.element_at_or_error(3).test().assert_error(NoSuchElementError).assert_no_violations()
    for _name, src in both_paths([]):
        src.first().test().assert_error(NoSuchElementError).assert_no_violations()
        src.last().test().assert_error(NoSuchElementError).assert_no_violations()
        src.first(5).test().assert_result(5).assert_no_violations()
        src.last(5).test().assert_result(5).assert_no_violations()


def test_repeat_and_retry_counts() -> None:
    for _name, src in both_paths([1, 2]):
        src.repeat(0).test().assert_result().assert_no_violations()
        src.repeat(1).test().assert_result(1, 2).assert_no_violations()
        src.repeat(3).test().assert_result(1, 2, 1, 2, 1, 2).assert_no_violations()
        failing = src.concat_with(Flowable.error(Boom()))
        failing.retry(0).test().assert_failure(Boom, 1, 2).assert_no_violations()
        failing.retry(2).test().assert_failure(Boom, 1, 2, 1, 2, 1, 2).assert_no_violations()
        failing.retry(5, lambda e: not isinstance(e, Boom)).test().assert_failure(Boom, 1, 2).assert_no_violations()
    with pytest.raises(ValueError):
        Flowable.just(1).repeat(-1)
    with pytest.raises(ValueError):
        Flowable.just(1).retry(-1)


def test_do_finally_runs_once_after_the_terminal_or_on_cancel() -> None:
    for _name, src in both_paths([1, 2, 3]):
        order: list[str] = []
        ts: TestSubscriber[int] = TestSubscriber()
        (
            src.do_on_cancel(lambda order=order: order.append("cancel"))
            .do_finally(lambda order=order: order.append("finally"))
            .do_on_complete(lambda order=order: order.append("complete"))
            .take(1)
            .subscribe(ts)
        )
        ts.assert_result(1).assert_no_violations()
        assert order == ["cancel", "finally"]
        order2: list[str] = []
        src.do_finally(lambda order2=order2: order2.append("finally")).do_on_complete(
            lambda order2=order2: order2.append("complete")
        ).test().assert_result(1, 2, 3).assert_no_violations()
        assert order2 == ["complete", "finally"]


def test_distinct_until_changed_compares_by_identity_then_equality() -> None:
    nan = float("nan")
    for _name, src in both_paths([nan, nan, 1.0, float("nan")]):
        ts = src.distinct_until_changed().test()
        assert len(ts.values) == 3, ts.values  # the same NaN object repeated is dropped (RxJava)
        ts.assert_complete().assert_no_violations()


def test_contains_compares_by_identity_then_equality() -> None:
    nan = float("nan")
    for _name, src in both_paths([1.0, nan]):
        src.contains(nan).test().assert_result(True).assert_no_violations()
        src.contains(2.0).test().assert_result(False).assert_no_violations()
