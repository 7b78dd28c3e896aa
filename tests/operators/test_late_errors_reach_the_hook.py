"""An error that arrives after an operator was cancelled or terminated (from a source that does not
stop at once: cancellation is eventual, rule 3.12) is never lost: it goes to the undeliverable-error
hook (``rstreams.plugins``), as RxJava's operators report it to ``RxJavaPlugins.onError``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rstreams import Flowable, plugins, schedulers
from rstreams.testing import TestPublisher, TestSubscriber, Violation

OPS: dict[str, Callable[[Flowable[Any]], Flowable[Any]]] = {
    "merge": lambda src: Flowable.merge(src, Flowable.never()),
    "zip": lambda src: Flowable.zip(src, Flowable.never()),
    "flat_map": lambda src: src.flat_map(lambda x: Flowable.just(x)),
    "switch_map": lambda src: src.switch_map(lambda x: Flowable.just(x)),
    "concat_map_eager": lambda src: src.concat_map_eager(lambda x: Flowable.just(x)),
    "observe_on": lambda src: src.observe_on(schedulers.immediate()),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_an_error_after_the_downstream_cancelled_goes_to_the_hook(name: str) -> None:
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    ts: TestSubscriber[Any] = TestSubscriber()
    late = ValueError("late")
    with plugins.collect_errors() as reported:
        OPS[name](Flowable.from_publisher(tp)).subscribe(ts)
        ts.cancel()
        tp.error(late)
    ts.assert_no_errors().assert_no_violations()
    assert late in reported or any(late in getattr(e, "exceptions", ()) for e in reported), reported


def test_zip_an_error_after_it_completed_goes_to_the_hook() -> None:
    p1: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    p2: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[Any] = TestSubscriber()
    late = ValueError("late")
    with plugins.collect_errors() as reported:
        Flowable.zip(p1, p2).subscribe(ts)
        p2.complete()  # an empty source ends the zip
        p1.error(late)
    ts.assert_complete().assert_no_errors().assert_no_violations()
    assert reported == [late]


@pytest.mark.parametrize("op", ["merge", "zip"])
def test_a_bad_request_after_a_cancel_is_a_no_op(op: str) -> None:
    """Rule 3.6: after a cancel a request, even a bad one, does nothing and reports nothing."""
    subscriptions: list[Any] = []

    class Raw:
        _rs_no_wrap = True  # the operator's own Subscription, as a library subscriber sees it

        def on_subscribe(self, s: Any) -> None:
            subscriptions.append(s)

        def on_next(self, item: Any) -> None: ...

        def on_error(self, error: BaseException) -> None: ...

        def on_complete(self) -> None: ...

    with plugins.collect_errors() as reported:
        getattr(Flowable, op)(Flowable.never(), Flowable.never()).subscribe(Raw())
        subscriptions[0].cancel()
        subscriptions[0].request(0)
    assert reported == []
