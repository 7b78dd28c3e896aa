"""The operator scenario harness (DESIGN.md section 7).

``check_scenarios(op, data, expected)`` runs one operator ``op: Flowable -> Flowable`` over
``data`` in every scenario and compares with ``expected`` (the values the operator must emit for
``data``, or a plain-Python model ``list -> list``):

* plain: over ``Flowable.from_iterable(data)`` (a fused source: the fused path when ``op`` folds);
* hidden: over ``Flowable.from_iterable(data).hide()`` (the unfused path);
* one by one: a subscriber that requests 1 at a time (rules 1.1, 3.3);
* cancelled mid-stream: request k, cancel, request more: nothing after the cancel (rules 3.6, 3.12);
* upstream error: ``data`` followed by an error: the values before it, then the error (or what
  ``on_error_expected`` says);
* every run ends with ``assert_no_violations()``.

A raising user callback is checked with ``check_raising(op_with_raising_callback, data)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rstreams import Flowable, plugins
from rstreams.testing import TestSubscriber

__all__ = ["check_scenarios", "check_raising", "Boom", "run_one_by_one"]


class Boom(Exception):
    """The error the harness injects."""


Op = Callable[[Flowable[Any]], Flowable[Any]]


def _expected(expected: Sequence[Any] | Callable[[list[Any]], Sequence[Any]], data: list[Any]) -> list[Any]:
    return list(expected(data)) if callable(expected) else list(expected)


def run_one_by_one(f: Flowable[Any], limit: int = 100_000) -> TestSubscriber[Any]:
    """Request one element at a time until the stream terminates."""
    ts: TestSubscriber[Any] = TestSubscriber(0)
    f.subscribe(ts)
    for _ in range(limit):
        if ts.completions or ts.errors:
            break
        ts.request(1)
    return ts


def check_scenarios(
    op: Op,
    data: Sequence[Any],
    expected: Sequence[Any] | Callable[[list[Any]], Sequence[Any]],
    *,
    completes: bool = True,
    on_error_expected: Callable[[list[Any]], tuple[list[Any], type[BaseException] | None]] | None = None,
    check_cancel: bool = True,
) -> None:
    """Run ``op`` over ``data`` in every scenario; each must emit ``expected`` without violations."""
    data = list(data)
    want = _expected(expected, data)
    with plugins.collect_errors() as undeliverable:
        sources: dict[str, Flowable[Any]] = {
            "plain": Flowable.from_iterable(data),
            "hidden": Flowable.from_iterable(data).hide(),
        }
        for name, src in sources.items():
            ts = op(src).test()
            ts.await_done(5)
            assert ts.values == want, f"[{name}] values {ts.values!r} != expected {want!r}"
            if completes:
                ts.assert_complete()
            ts.assert_no_errors().assert_no_violations()

            ts1 = run_one_by_one(op(src))
            assert ts1.values == want, f"[{name}, request(1) at a time] values {ts1.values!r} != expected {want!r}"
            if completes:
                ts1.assert_complete()
            ts1.assert_no_errors().assert_no_violations()

            if check_cancel and len(want) >= 2:
                k = len(want) // 2
                tsc: TestSubscriber[Any] = TestSubscriber(k)
                op(src).subscribe(tsc)
                tsc.await_count(k, 5)
                tsc.cancel()
                tsc.request(5)
                assert tsc.values == want[:k], f"[{name}, cancel after {k}] values {tsc.values!r} != {want[:k]!r}"
                tsc.assert_no_violations()

        # upstream error after the data
        err = Boom("upstream failed")
        src_err = Flowable.concat(Flowable.from_iterable(data), Flowable.error(err))
        tse = op(src_err).test()
        tse.await_done(5)
        if on_error_expected is not None:
            vals, etype = on_error_expected(data)
            assert tse.values == vals, f"[upstream error] values {tse.values!r} != {vals!r}"
            if etype is None:
                tse.assert_no_errors()
            else:
                tse.assert_error(etype)
        else:
            if want and tse.values:
                assert tse.values == want[: len(tse.values)], f"[upstream error] values {tse.values!r} not a prefix of {want!r}"
            if tse.errors:
                tse.assert_error(Boom)
        tse.assert_no_violations()
    assert not undeliverable, f"undeliverable errors: {undeliverable!r}"


def check_raising(op: Op, data: Sequence[Any], *, error: type[BaseException] = Boom) -> TestSubscriber[Any]:
    """``op`` carries a user callback that raises ``Boom``: the stream must end with that error,
    the upstream must be cancelled, and nothing may follow the error."""
    cancelled: list[bool] = []
    for name, src in (
        ("plain", Flowable.from_iterable(list(data))),
        ("hidden", Flowable.from_iterable(list(data)).hide().do_on_cancel(lambda: cancelled.append(True))),
    ):
        ts = op(src).test()
        ts.await_done(5)
        ts.assert_error(error).assert_no_violations()
        if name == "hidden":
            assert cancelled, "the upstream was not cancelled after the callback raised"
    return ts
