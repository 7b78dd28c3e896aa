"""from_publisher checks a foreign Publisher's signals at the door (rules 1.1, 1.7, 2.12, 2.13).

The operators behind ``from_publisher`` trust their upstream (the relaxed contract): a breach is
caught where it enters, named after the publisher's class, and never reaches them. With assembly
tracing on, a protocol violation names where the stage was built.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from rstreams import Flowable, plugins
from rstreams.errors import MissingBackpressureError, NoneElementError, ProtocolViolationError
from rstreams.testing import TestSubscriber


class _Sub:
    def __init__(self, on_request: Any = None) -> None:
        self.requested: list[int] = []
        self.cancelled = False
        self._on_request = on_request

    def request(self, n: int) -> None:
        self.requested.append(n)
        if self._on_request is not None:
            self._on_request(n)

    def cancel(self) -> None:
        self.cancelled = True


class _Scripted:
    """A publisher that runs ``script(subscriber, subscription)`` when subscribed."""

    def __init__(self, script: Any) -> None:
        self.script = script
        self.sub = _Sub()

    def subscribe(self, s: Any) -> None:
        s.on_subscribe(self.sub)
        self.script(s, self.sub)


def test_rule_1_1_an_unrequested_element_is_missing_backpressure_naming_the_publisher() -> None:
    def script(s: Any, sub: _Sub) -> None:
        for i in range(5):
            s.on_next(i)
        s.on_complete()

    pub = _Scripted(script)
    ts: TestSubscriber[int] = TestSubscriber(2)
    with plugins.collect_errors() as undeliverable:
        Flowable.from_publisher(pub).map(lambda x: x * 10).subscribe(ts)
    ts.assert_values(0, 10).assert_error(MissingBackpressureError, match=r"Rule 1\.1.*from_publisher\(_Scripted\)")
    ts.assert_no_violations()
    assert pub.sub.cancelled
    assert undeliverable == [], "the later signals of a failed publisher are dropped, not reported"


def test_rule_1_1_demand_is_counted_before_the_request_reaches_the_publisher() -> None:
    # a publisher that emits from inside request(): the element is within the demand just asked
    holder: dict[str, Any] = {}
    count = [0]

    def on_request(n: int) -> None:
        for _ in range(min(n, 10)):
            if count[0] < 10:
                holder["s"].on_next(count[0])
                count[0] += 1
        if count[0] == 10:
            count[0] += 1
            holder["s"].on_complete()

    class Synchronous:
        def subscribe(self, s: Any) -> None:
            holder["s"] = s
            s.on_subscribe(_Sub(on_request))

    for initial in (1, 3, 2**63 - 1):
        count[0] = 0
        ts: TestSubscriber[int] = TestSubscriber(initial)
        Flowable.from_publisher(Synchronous()).subscribe(ts)
        while not ts.is_terminated:
            ts.request(1)
        ts.assert_result(*range(10)).assert_no_violations()


def test_rule_1_1_requests_from_another_thread_are_counted_without_loss() -> None:
    # race: request on many threads vs on_next on the publisher's: every requested element passes
    holder: dict[str, Any] = {}
    lock = threading.Lock()
    pending = [0]
    sent = [0]

    def on_request(n: int) -> None:
        with lock:
            pending[0] += n
            while pending[0] and sent[0] < 4000:
                pending[0] -= 1
                holder["s"].on_next(sent[0])
                sent[0] += 1
            if sent[0] == 4000:
                sent[0] += 1
                holder["s"].on_complete()

    class Threaded:
        def subscribe(self, s: Any) -> None:
            holder["s"] = s
            s.on_subscribe(_Sub(on_request))

    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_publisher(Threaded()).subscribe(ts)
    threads = [threading.Thread(target=lambda: [ts.request(1) for _ in range(1000)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ts.await_done(5).assert_complete().assert_no_violations()
    assert sorted(ts.values) == list(range(4000))


def test_rule_1_7_signals_after_the_terminal_one_are_reported_not_delivered() -> None:
    def script(s: Any, sub: _Sub) -> None:
        s.on_complete()
        s.on_next(1)
        s.on_complete()
        s.on_error(ValueError("late"))

    ts: TestSubscriber[int] = TestSubscriber()
    with plugins.collect_errors() as undeliverable:
        Flowable.from_publisher(_Scripted(script)).subscribe(ts)
    ts.assert_result().assert_no_violations()
    kinds = [(type(e).__name__, getattr(e, "rule", None)) for e in undeliverable]
    assert ("ProtocolViolationError", "1.7") in kinds
    assert any(isinstance(e, ValueError) for e in undeliverable), "a late error is reported, never lost"
    assert all("from_publisher(_Scripted)" in str(e) or isinstance(e, ValueError) for e in undeliverable)


def test_rule_2_12_a_second_on_subscribe_is_cancelled_and_reported_naming_the_publisher() -> None:
    second = _Sub()

    def script(s: Any, sub: _Sub) -> None:
        s.on_subscribe(second)
        s.on_next(7)
        s.on_complete()

    ts: TestSubscriber[int] = TestSubscriber()
    with plugins.collect_errors() as undeliverable:
        Flowable.from_publisher(_Scripted(script)).subscribe(ts)
    ts.assert_result(7).assert_no_violations()
    assert second.cancelled
    assert len(undeliverable) == 1
    err = undeliverable[0]
    assert isinstance(err, ProtocolViolationError) and err.rule == "2.12"
    assert "from_publisher(_Scripted)" in str(err)


def test_rule_2_13_a_none_element_is_an_error_downstream_and_raised_to_the_publisher() -> None:
    raised: list[BaseException] = []

    def script(s: Any, sub: _Sub) -> None:
        try:
            s.on_next(None)
        except TypeError as e:
            raised.append(e)

    pub = _Scripted(script)
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.from_publisher(pub).subscribe(ts)
    ts.assert_error(NoneElementError, match="2.13").assert_no_violations()
    assert raised and pub.sub.cancelled


@pytest.fixture
def tracing() -> Any:
    plugins.enable_assembly_tracing()
    try:
        yield
    finally:
        plugins.disable_assembly_tracing()


def test_a_protocol_violation_names_where_the_stage_was_assembled(tracing: Any) -> None:
    def script(s: Any, sub: _Sub) -> None:
        s.on_subscribe(_Sub())  # a second subscription: rule 2.12

    ts: TestSubscriber[int] = TestSubscriber()
    with plugins.collect_errors() as undeliverable:
        Flowable.from_publisher(_Scripted(script)).map(lambda x: x).subscribe(ts)  # the assembly line
    assert len(undeliverable) == 1
    err = undeliverable[0]
    assert isinstance(err, ProtocolViolationError) and err.rule == "2.12"
    notes = " ".join(getattr(err, "__notes__", []))
    assert "test_from_publisher_door.py" in notes or "from_publisher(_Scripted)" in str(err)
    assert "from_publisher(_Scripted)" in str(err)
    ts.assert_no_violations()


def test_an_unrequested_element_under_tracing_carries_the_assembly_notes(tracing: Any) -> None:
    def script(s: Any, sub: _Sub) -> None:
        s.on_next(1)
        s.on_next(2)

    ts: TestSubscriber[int] = TestSubscriber(1)
    Flowable.from_publisher(_Scripted(script)).map(lambda x: x).subscribe(ts)
    ts.assert_values(1).assert_error(MissingBackpressureError).assert_no_violations()
    notes = getattr(ts.errors[0], "__notes__", [])
    assert any("from_publisher(_Scripted)" in n and "test_from_publisher_door.py" in n for n in notes), notes
