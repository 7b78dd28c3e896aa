"""ProtocolViolationError messages name the class that saw the violation."""

from __future__ import annotations

from typing import Any

from rstreams import Flowable, ProtocolViolationError, plugins
from rstreams._internal.atomics import AtomicInt
from rstreams._internal.requests import produced
from rstreams._internal.subscriptions import EMPTY


class _CountingStage:
    def on_next(self, item: Any) -> None:
        produced(AtomicInt(1), 3)


def test_produced_beyond_demand_names_the_operator_that_saw_it() -> None:
    with plugins.collect_errors() as errors:
        _CountingStage().on_next(1)
    assert len(errors) == 1 and isinstance(errors[0], ProtocolViolationError)
    assert "seen by _CountingStage" in str(errors[0]) and errors[0].rule == "1.1"


class _Recorder:
    def __init__(self) -> None:
        self.errors: list[BaseException] = []

    def on_subscribe(self, s: Any) -> None:
        s.request(1)

    def on_next(self, item: Any) -> None:
        pass

    def on_error(self, e: BaseException) -> None:
        self.errors.append(e)

    def on_complete(self) -> None:
        pass


def test_a_second_on_subscribe_names_the_subscriber() -> None:
    rec = _Recorder()

    class _Twice(Flowable[int]):
        def _subscribe_actual(self, subscriber: Any) -> None:
            subscriber.on_subscribe(EMPTY)
            subscriber.on_subscribe(EMPTY)

    with plugins.collect_errors():
        _Twice().subscribe(rec)
    assert rec.errors and "more than once (on _Recorder)" in str(rec.errors[0])
