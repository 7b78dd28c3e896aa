"""map_not_none ("map or drop", RxJava 3's mapOptional with None as the empty result) and rule
2.13 on fused chains: a None from a user function is the same error fused or not.
Every case runs fused and behind hide() and compares the two."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rstreams import Flowable
from rstreams.errors import NoneElementError
from rstreams.testing import TestSubscriber

Chain = Callable[[Flowable[Any]], Flowable[Any]]


def _both(data: list[Any], chain: Chain, request: int | None = None) -> tuple[TestSubscriber[Any], TestSubscriber[Any]]:
    """The same chain over a fused source and behind hide(); the signals must be equal."""
    out = []
    for hidden in (False, True):
        src = Flowable.from_iterable(data)
        ts: TestSubscriber[Any] = TestSubscriber(0)
        chain(src.hide() if hidden else src).subscribe(ts)
        if request is None:
            ts.request(2**63 - 1)
        else:
            while not ts.is_terminated and len(ts.values) < len(data) + 1:
                ts.request(request)
        ts.assert_no_violations()
        out.append(ts)
    fused, hidden_ts = out
    assert fused.values == hidden_ts.values
    assert [type(e) for e in fused.errors] == [type(e) for e in hidden_ts.errors]
    assert fused.completions == hidden_ts.completions
    return fused, hidden_ts


def _none_on(bad: int) -> Callable[[int], int | None]:
    return lambda x: None if x == bad else x


@pytest.mark.parametrize(
    "chain",
    [
        lambda s: s.map(_none_on(2)).filter(lambda x: True),
        lambda s: s.map(_none_on(2)).filter(lambda x: x is not None),
        lambda s: s.map(_none_on(2)).skip(3),
        lambda s: s.map(_none_on(2)).buffer(2),
        lambda s: s.map(_none_on(2)).map(lambda x: 0 if x is None else x),
        lambda s: s.map(_none_on(2)).take_while(lambda x: True),
        lambda s: s.map(_none_on(2)).distinct(),
        lambda s: s.map(_none_on(2)).last(),
        lambda s: s.map(_none_on(2)).reduce(lambda a, b: a),
    ],
    ids=["filter", "filter-not-none", "skip", "buffer", "map", "take_while", "distinct", "last", "reduce"],
)
@pytest.mark.parametrize("request_n", [None, 1, 3])
def test_a_none_from_a_user_function_fails_fused_as_hidden(chain: Chain, request_n: int | None) -> None:
    fused, _ = _both([0, 1, 2, 3, 4], chain, request_n)
    fused.assert_error(NoneElementError)


def test_a_none_from_the_source_fails_fused_as_hidden() -> None:
    fused, _ = _both([0, None, 2], lambda s: s.filter(lambda x: True).map(lambda x: x))
    fused.assert_failure(NoneElementError, 0)


def test_the_fused_mapper_runs_no_further_than_the_unfused_one() -> None:
    # the fused chain meets the None where it is produced (not after a chunk of 4096); the
    # unfused map over a batching source maps its whole batch first (the batch protocol's
    # documented allowance), so the fused calls are a prefix of the unfused ones
    runs: list[list[int]] = []
    for hidden in (False, True):
        calls: list[int] = []

        def f(x: int, calls: list[int] = calls) -> int | None:
            calls.append(x)
            return None if x == 1 else x

        src = Flowable.range(0, 10)
        (src.hide() if hidden else src).map(f).filter(lambda x: True).reduce(lambda a, b: a + b).test().assert_error(
            NoneElementError
        ).assert_no_violations()
        runs.append(calls)
    fused_calls, hidden_calls = runs
    assert fused_calls == [0, 1] == hidden_calls[:2]


def test_map_not_none_example() -> None:
    parse: Callable[[str], int | None] = lambda s: int(s) if s.isdigit() else None  # noqa: E731
    Flowable.just("1", "x", "3").map_not_none(parse).test().assert_result(1, 3).assert_no_violations()


@pytest.mark.parametrize("request_n", [None, 1, 2, 7])
def test_map_not_none_drops_none_fused_as_hidden(request_n: int | None) -> None:
    fused, _ = _both(list(range(20)), lambda s: s.map_not_none(lambda x: x * 10 if x % 3 else None), request_n)
    fused.assert_result(*[x * 10 for x in range(20) if x % 3])


@pytest.mark.parametrize("request_n", [None, 1, 4])
def test_map_not_none_raising_mapper_fused_as_hidden(request_n: int | None) -> None:
    class Boom(Exception):
        pass

    def f(x: int) -> int | None:
        if x == 5:
            raise Boom()
        return None if x % 2 else x

    fused, _ = _both(list(range(10)), lambda s: s.map_not_none(f), request_n)
    fused.assert_failure(Boom, 0, 2, 4)


def test_map_not_none_replaces_dropped_elements_under_bounded_demand() -> None:
    for src in (Flowable.range(0, 10), Flowable.range(0, 10).hide()):
        ts = src.map_not_none(lambda x: x if x > 6 else None).test(2)
        ts.assert_values(7, 8).assert_not_complete().assert_no_violations()
        ts.request(1)
        ts.assert_result(7, 8, 9).assert_no_violations()


def test_map_not_none_rejects_a_non_callable() -> None:
    with pytest.raises(TypeError):
        Flowable.range(0, 3).map_not_none(3)  # type: ignore[arg-type]
