"""How RxJava and RxPY users call subscribe and range.

The callback forms are checked next to a TestSubscriber on the same multicast source: ``publish()``
is lockstep, so the TestSubscriber only gets its elements when the callback subscriber requested
them too (a callback subscriber that never requests would stall it).
"""

from __future__ import annotations

from typing import Any

import pytest

from rstreams import Flowable
from rstreams.errors import OnErrorNotImplementedError


class Boom(Exception):
    pass


def test_subscribe_takes_on_next_on_error_on_complete_positionally() -> None:
    got: list[int] = []
    errors: list[BaseException] = []
    done: list[int] = []
    cf = Flowable.range(0, 3).publish()
    ts = cf.test()
    d = cf.subscribe(got.append, errors.append, lambda: done.append(1))
    cf.connect()
    ts.assert_result(0, 1, 2).assert_no_violations()
    assert got == [0, 1, 2] and errors == [] and done == [1]
    assert d.is_disposed


def test_subscribe_positional_on_error_receives_the_error() -> None:
    got: list[int] = []
    errors: list[BaseException] = []
    source = Flowable.concat(Flowable.just(1), Flowable.error(Boom("x")))
    source.test().assert_values(1).assert_error(Boom).assert_no_violations()
    source.subscribe(got.append, errors.append)
    assert got == [1] and len(errors) == 1 and isinstance(errors[0], Boom)


def test_subscribe_positional_none_on_next_with_callbacks() -> None:
    # RxPY style: subscribe(None, on_error) when only the error matters
    errors: list[BaseException] = []
    done: list[int] = []
    Flowable.just(1).test().assert_result(1).assert_no_violations()
    Flowable.just(1).subscribe(None, errors.append, lambda: done.append(1))
    assert errors == [] and done == [1]


def test_subscribe_positional_and_keyword_on_error_is_a_type_error() -> None:
    Flowable.just(1).test().assert_result(1).assert_no_violations()
    with pytest.raises(TypeError, match="on_error"):
        Flowable.just(1).subscribe(print, print, on_error=print)  # type: ignore[call-overload]


def test_subscribe_without_arguments_requests_everything_and_ignores_values(
    undeliverable: list[BaseException],
) -> None:
    cf = Flowable.range(0, 5).publish()
    ts = cf.test()
    d = cf.subscribe()
    cf.connect()
    ts.assert_result(0, 1, 2, 3, 4).assert_no_violations()
    assert d.is_disposed
    assert undeliverable == []


def test_subscribe_without_arguments_sends_errors_to_the_undeliverable_hook(
    undeliverable: list[BaseException],
) -> None:
    source = Flowable.error(Boom("unhandled"))
    source.test().assert_error(Boom).assert_no_violations()
    Flowable.error(Boom("unhandled")).subscribe()
    assert len(undeliverable) == 1
    assert isinstance(undeliverable[0], OnErrorNotImplementedError)
    assert isinstance(undeliverable[0].__cause__, Boom)


def test_subscribe_none_still_raises_rule_1_9() -> None:
    Flowable.just(1).test().assert_result(1).assert_no_violations()
    with pytest.raises(TypeError, match="1.9"):
        Flowable.just(1).subscribe(None)


@pytest.mark.parametrize("bad", [42, "print", object()])
def test_subscribe_with_a_non_callable_non_subscriber_is_a_type_error_at_the_call(
    bad: Any, undeliverable: list[BaseException]
) -> None:
    Flowable.just(1).test().assert_result(1).assert_no_violations()
    with pytest.raises(TypeError, match="Subscriber or a callable"):
        Flowable.just(1).subscribe(bad)
    assert undeliverable == []


def test_subscribe_with_a_half_subscriber_is_a_type_error_naming_the_missing_methods(
    undeliverable: list[BaseException],
) -> None:
    class Half:
        def on_subscribe(self, s: Any) -> None:
            s.request(1)

    Flowable.just(1).test().assert_result(1).assert_no_violations()
    with pytest.raises(TypeError, match="on_next, on_error, on_complete"):
        Flowable.just(1).subscribe(Half())  # type: ignore[call-overload]
    assert undeliverable == []


def test_subscribe_a_subscriber_with_callbacks_is_a_type_error() -> None:
    Flowable.just(1).test().assert_result(1).assert_no_violations()
    from rstreams.testing import TestSubscriber

    ts: TestSubscriber[int] = TestSubscriber()
    with pytest.raises(TypeError, match="callbacks"):
        Flowable.just(1).subscribe(ts, print)  # type: ignore[call-overload]
    ts.assert_not_subscribed().assert_no_violations()


# ------------------------------------------------------------------------------------------ range
def test_range_is_start_and_count_as_rxjava() -> None:
    Flowable.range(5, 3).test().assert_result(5, 6, 7).assert_no_violations()


@pytest.mark.parametrize(
    "r",
    [range(0, 5), range(0, 10, 3), range(10, 0, -2), range(5, 5), range(3, 0), range(-3, 3, 2)],
)
@pytest.mark.parametrize("hidden", [False, True])
def test_range_accepts_a_python_range(r: range, hidden: bool) -> None:
    f = Flowable.range(r)
    if hidden:
        f = f.hide()
    f.test().assert_result(*r).assert_no_violations()
    f.test(2).assert_values(*list(r)[:2]).assert_no_violations()


def test_range_object_fuses_with_map_and_filter() -> None:
    f = Flowable.range(range(0, 20, 2)).map(lambda x: x + 1).filter(lambda x: x % 3 == 0)
    assert f._fused() is not None
    f.test().assert_result(3, 9, 15).assert_no_violations()


def test_range_object_resubscribes() -> None:
    f = Flowable.range(range(1, 4))
    f.repeat(2).test().assert_result(1, 2, 3, 1, 2, 3).assert_no_violations()


@pytest.mark.parametrize(
    "args",
    [(range(3), 1), (1.0, 2), (1, True), ("0", 3), (), (None,), (5,)],
)
def test_range_bad_arguments_are_type_errors(args: tuple[Any, ...]) -> None:
    Flowable.just(1).test().assert_result(1).assert_no_violations()
    with pytest.raises(TypeError, match="range"):
        Flowable.range(*args)
