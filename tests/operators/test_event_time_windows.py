"""tumbling_window, sliding_window, session_window: event-time windows with a watermark.

Exact outputs on hand-written inputs, the late-element side channel, keys, sliding overlap, session
merges, fired-once and released state, backpressure, cancel, errors, None, bad arguments, the idle
timer on virtual time, and a seeded property test against a plain-Python model of the rules
(``_model`` below: one element at a time, windows fired after every element).
"""

from __future__ import annotations

import operator
import random
import time
from collections.abc import Callable
from operator import itemgetter
from typing import Any

import pytest

from rstreams import Flowable, plugins
from rstreams.errors import NoneElementError
from rstreams.flowable.operators._event_time_window import Aggregator, LateElementError, Window
from rstreams.processors import PublishProcessor, ReplayProcessor
from rstreams.testing import TestPublisher, TestScheduler, TestSubscriber

from .harness import Boom, check_raising, check_scenarios, run_one_by_one

ts0 = itemgetter(1)  # events are (key, time) or (key, time, value)
k0 = itemgetter(0)


def rows(values: list[Any]) -> list[tuple[Any, ...]]:
    return [(w.key, w.start, w.end, w.value) for w in values]


def run(f: Flowable[Any]) -> TestSubscriber[Any]:
    ts = f.test()
    ts.assert_no_violations()
    return ts


# ---------------------------------------------------------------------------------------------
# A plain-Python model of the rules, one element at a time


def _model(
    events: list[Any],
    *,
    kind: str,
    size: float = 0,
    slide: float = 0,
    gap: float = 0,
    lateness: float = 0,
    ts: Callable[[Any], Any] = ts0,
    key: Callable[[Any], Any] | None = None,
    every: int | None = None,
) -> tuple[list[tuple[Any, Any, Any, list[Any], bool]], list[Any]]:
    """(results as (key, start, end, elements in the operator's order, final), late elements).

    Per element: the watermark moves, the windows it passed fire (by end, then opening), the
    element is folded, then, with ``every`` (``early_every=``), the early results it triggered (by
    end; a merged session's count is the sum of its parts')."""
    maxts = float("-inf")
    wm = float("-inf")
    out: list[tuple[Any, Any, Any, list[Any], bool]] = []
    late: list[Any] = []
    seq = 0
    fixed: dict[tuple[Any, Any], list[Any]] = {}  # (q, key) -> [seq, start, end, elements, count]
    sessions: dict[Any, list[list[Any]]] = {}  # key -> [[start, end, elements, seq, count], ...]
    n = every if every is not None else float("inf")

    def fire(everything: bool) -> None:
        ready: list[tuple[Any, int, Any, Any, Any, list[Any]]] = []
        for qk, (sq, start, end, xs, _) in list(fixed.items()):
            if everything or end <= wm:
                ready.append((end, sq, qk[1], start, end, xs))
                del fixed[qk]
        for k, ss in list(sessions.items()):
            for s in list(ss):
                if everything or s[1] <= wm:
                    ready.append((s[1], s[3], k, s[0], s[1], s[2]))
                    ss.remove(s)
            if not ss:
                del sessions[k]
        ready.sort(key=lambda r: (r[0], r[1]))
        out.extend((k, start, end, xs, True) for _, _, k, start, end, xs in ready)

    for x in events:
        t = ts(x)
        if t > maxts:
            maxts = t
            wm = t - lateness
        fire(False)
        early: list[tuple[Any, Any, Any, list[Any], bool]] = []
        if kind in ("tumbling", "sliding"):
            sl = size if kind == "tumbling" else slide
            q = t // sl
            missed = False
            while q * sl + size > t:
                end = q * sl + size
                if end <= wm:
                    missed = True
                    break
                k = None if key is None else key(x)
                if (q, k) not in fixed:
                    fixed[(q, k)] = [seq, q * sl, end, [], 0]
                    seq += 1
                win = fixed[(q, k)]
                win[3].append(x)
                win[4] += 1
                if win[4] >= n:
                    win[4] = 0
                    early.append((k, win[1], win[2], list(win[3]), False))
                q -= 1
            if missed:
                late.append(x)
        else:
            k = None if key is None else key(x)
            end = t + gap
            ss = sessions.setdefault(k, [])
            touch = [s for s in ss if s[1] > wm and s[0] < end and t < s[1]]
            if not touch:
                if end <= wm:
                    late.append(x)
                    if not ss:
                        del sessions[k]
                    continue
                s = [t, end, [x], seq, 0]
                seq += 1
                ss.append(s)
            else:
                touch.sort(key=lambda s: s[0])
                xs: list[Any] = []
                for o in touch:
                    xs.extend(o[2])
                xs.append(x)
                s = min(touch, key=lambda o: o[3])
                s[0] = min(t, touch[0][0])
                s[1] = max(end, max(o[1] for o in touch))
                s[2] = xs
                s[4] = sum(o[4] for o in touch)
                for o in touch:
                    if o is not s:
                        ss.remove(o)
            s[4] += 1
            if s[4] >= n:
                s[4] = 0
                early.append((k, s[0], s[1], list(s[2]), False))
        early.sort(key=lambda r: r[2])
        out.extend(early)
    fire(True)
    return out, late


# ---------------------------------------------------------------------------------------------
# Exact outputs on hand-written inputs


def test_tumbling_out_of_order_within_lateness() -> None:
    events = [("a", 1), ("a", 12), ("a", 4), ("a", 21), ("a", 9), ("a", 35)]
    # lateness 10: 4 arrives when the watermark is 2, 9 when it is 11 (window [0, 10) has closed)
    late: list[Any] = []
    ts = run(Flowable.from_iterable(events).tumbling_window(10, timestamp=ts0, allowed_lateness=10,
                                                            late=late.append, aggregate="count"))
    ts.assert_complete()
    assert rows(ts.values) == [(None, 0, 10, 2), (None, 10, 20, 1), (None, 20, 30, 1), (None, 30, 40, 1)]
    assert late == [("a", 9)]


def test_window_fires_when_the_watermark_reaches_its_end_not_before() -> None:
    tp: TestPublisher[tuple[str, float]] = TestPublisher.create()
    ts = Flowable.from_publisher(tp).tumbling_window(10, timestamp=ts0, allowed_lateness=2, aggregate="list").test()
    tp.next(("a", 3.0), ("b", 9.5), ("c", 11.0))
    ts.assert_no_values()  # watermark 9 < 10
    tp.next(("d", 12.0))  # watermark 10: [0, 10) fires
    assert rows(ts.values) == [(None, 0.0, 10.0, [("a", 3.0), ("b", 9.5)])]
    tp.next(("e", 10.5))  # not late: its window [10, 20) is open
    tp.complete()
    assert rows(ts.values)[1:] == [(None, 10.0, 20.0, [("c", 11.0), ("d", 12.0), ("e", 10.5)])]
    ts.assert_complete().assert_no_violations()


def test_keyed_tumbling_windows_in_order_of_end_then_opening() -> None:
    events = [("b", 1), ("a", 2), ("b", 3), ("c", 11), ("a", 12), ("a", 25)]
    ts = run(Flowable.from_iterable(events).tumbling_window(10, timestamp=ts0, key=k0, aggregate="count"))
    assert rows(ts.values) == [
        ("b", 0, 10, 2), ("a", 0, 10, 1),  # fired by ("c", 11): keys in the order they opened
        ("c", 10, 20, 1), ("a", 10, 20, 1),  # fired by ("a", 25)
        ("a", 20, 30, 1),  # at completion
    ]


def test_sliding_windows_overlap() -> None:
    ts = run(Flowable.from_iterable([1, 4, 7, 12]).sliding_window(6, 3, timestamp=lambda t: t, aggregate="sum"))
    # windows [q*3, q*3+6): 1 in [-3,3),[0,6); 4 in [0,6),[3,9); 7 in [3,9),[6,12); 12 in [9,15),[12,18)
    assert rows(ts.values) == [
        (None, -3, 3, 1), (None, 0, 6, 5), (None, 3, 9, 11), (None, 6, 12, 7), (None, 9, 15, 12), (None, 12, 18, 12),
    ]


def test_sliding_element_late_for_some_windows_counts_in_the_open_ones_and_is_reported_once() -> None:
    late: list[Any] = []
    events = [("x", 1), ("x", 10), ("x", 5)]
    ts = run(Flowable.from_iterable(events).sliding_window(6, 3, timestamp=ts0, late=late.append,
                                                           aggregate="count", allowed_lateness=3))
    # watermark 7 when 5 arrives: [0, 6) has closed (6 <= 7), [3, 9) is open
    assert rows(ts.values) == [(None, -3, 3, 1), (None, 0, 6, 1), (None, 3, 9, 1), (None, 6, 12, 1), (None, 9, 15, 1)]
    assert late == [("x", 5)]


def test_session_windows_per_key() -> None:
    events = [("u", 0), ("v", 1), ("u", 3), ("u", 9), ("v", 20)]
    ts = run(Flowable.from_iterable(events).session_window(5, timestamp=ts0, key=k0, allowed_lateness=100,
                                                           aggregate="count"))
    assert rows(ts.values) == [("v", 1, 6, 1), ("u", 0, 8, 2), ("u", 9, 14, 1), ("v", 20, 25, 1)]


def test_session_merge_of_two_sessions_bridged_by_a_late_but_allowed_event() -> None:
    late: list[Any] = []
    # gap 4: sessions [0, 4) and [6, 10) of "u", then [12, 16); ("u", 3) arrives 9 s behind the
    # latest event (allowed: lateness 10, watermark 2) and bridges the first two into [0, 10)
    events = [("u", 0, "a"), ("u", 6, "b"), ("u", 12, "x"), ("u", 3, "c"), ("u", 30, "d")]
    ts = run(Flowable.from_iterable(events).session_window(4, timestamp=ts0, key=k0, allowed_lateness=10,
                                                           late=late.append, aggregate="list"))
    assert [(k, s, e, [v[2] for v in xs]) for k, s, e, xs in rows(ts.values)] == [
        ("u", 0, 10, ["a", "b", "c"]),
        ("u", 12, 16, ["x"]),
        ("u", 30, 34, ["d"]),
    ]
    assert late == []
    # without the lateness ("u", 3) is late: the sessions stay apart
    late2: list[Any] = []
    ts2 = run(Flowable.from_iterable(events).session_window(4, timestamp=ts0, key=k0, late=late2.append,
                                                            aggregate="count"))
    assert rows(ts2.values) == [("u", 0, 4, 1), ("u", 6, 10, 1), ("u", 12, 16, 1), ("u", 30, 34, 1)]
    assert late2 == [("u", 3, "c")]


def test_session_merge_with_a_custom_aggregator_uses_merge() -> None:
    mean: Aggregator[Any, Any, Any] = Aggregator(lambda: (0, 0), lambda a, e: (a[0] + e[2], a[1] + 1),
                                                 merge=lambda a, b: (a[0] + b[0], a[1] + b[1]), result=lambda a: a[0] / a[1])
    events = [("u", 0, 2), ("u", 6, 4), ("u", 3, 6)]
    ts = run(Flowable.from_iterable(events).session_window(4, timestamp=ts0, key=k0, allowed_lateness=10,
                                                           aggregate=mean))
    assert rows(ts.values) == [("u", 0, 10, 4.0)]


def test_a_session_element_behind_the_watermark_is_late_unless_it_joins_an_open_session() -> None:
    late: list[Any] = []
    events = [("u", 0), ("u", 20), ("u", 2), ("u", 17), ("v", 1)]
    ts = run(Flowable.from_iterable(events).session_window(5, timestamp=ts0, key=k0, allowed_lateness=2,
                                                           late=late.append, aggregate="count"))
    # watermark 18 after ("u", 20): 2 -> [2, 7) ended: late; 17 joins [20, 25) -> [17, 25); v late
    assert rows(ts.values) == [("u", 0, 5, 1), ("u", 17, 25, 2)]
    assert late == [("u", 2), ("v", 1)]


def test_builtin_aggregates_and_the_process_path_agree() -> None:
    time_of = {5: 1, 3: 2, 7: 14, 1: 15, 4: 16, 2: 33}  # value -> event time
    src = Flowable.from_iterable(list(time_of))

    def by(aggregate: Any = None, process: Any = None) -> list[Any]:
        f = src.tumbling_window(10, timestamp=time_of.__getitem__, aggregate=aggregate, process=process)
        return [w.value for w in run(f).values]

    assert by("count") == [2, 3, 1] == by(process=lambda w: w.count())
    assert by("sum") == [8, 12, 2] == by(operator.add) == by(process=lambda w: w.reduce(operator.add))
    assert by("min") == [3, 1, 2] and by("max") == [5, 7, 2]
    assert by("list") == [[5, 3], [7, 1, 4], [2]] == by() == by(process=lambda w: w.to_list())
    assert by((int, operator.add)) == [8, 12, 2] == by(Aggregator(int, operator.add))
    assert by(Aggregator(list, lambda a, x: a + [x], result=len)) == [2, 3, 1]


def test_process_emits_one_window_per_value_and_none_for_an_empty_result() -> None:
    events = [("a", 1), ("c", 1), ("a", 2), ("b", 3), ("a", 12)]  # c's window reduces to nothing
    ts = run(Flowable.from_iterable(events).tumbling_window(
        10, timestamp=ts0, key=k0, process=lambda w: w.filter(lambda e: e[1] > 1).map(lambda e: e[1])))
    assert rows(ts.values) == [("a", 0, 10, 2), ("b", 0, 10, 3), ("a", 10, 20, 12)]
    ts.assert_complete()


def test_unkeyed_windows_have_key_none_and_a_key_function_may_return_none() -> None:
    ts = run(Flowable.from_iterable([("a", 1), ("b", 2)]).tumbling_window(
        10, timestamp=ts0, key=lambda e: None if e[0] == "a" else e[0], aggregate="count"))
    assert rows(ts.values) == [(None, 0, 10, 1), ("b", 0, 10, 1)]


def test_float_timestamps_and_sizes() -> None:
    events = [("a", 0.05), ("a", 0.15), ("a", 0.25), ("a", 0.31)]
    ts = run(Flowable.from_iterable(events).tumbling_window(0.1, timestamp=ts0, aggregate="count"))
    assert [w.value for w in ts.values] == [1, 1, 1, 1]
    assert all(w.start <= e[1] < w.end for w, e in zip(ts.values, events, strict=True))


def test_window_record_is_an_immutable_named_record() -> None:
    w = Window("k", 0.0, 10.0, 3)
    key, start, end, value = w
    assert (key, start, end, value) == ("k", 0.0, 10.0, 3) and w.value == 3
    with pytest.raises(AttributeError):
        w.value = 4  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# Late elements: the side channel, never silently dropped


def test_late_default_is_an_error_after_the_windows_already_fired() -> None:
    events = [("a", 1), ("a", 15), ("a", 2), ("a", 16)]
    ts = run(Flowable.from_iterable(events).tumbling_window(10, timestamp=ts0, aggregate="count"))
    assert rows(ts.values) == [(None, 0, 10, 1)]
    ts.assert_error(LateElementError)
    msg = str(ts.errors[0])
    assert "('a', 2)" in msg and "[0, 10)" in msg and "watermark 15" in msg and "late=" in msg


def test_late_drop_is_explicit_and_drops() -> None:
    events = [("a", 1), ("a", 15), ("a", 2), ("a", 16)]
    ts = run(Flowable.from_iterable(events).tumbling_window(10, timestamp=ts0, late="drop", aggregate="count"))
    assert rows(ts.values) == [(None, 0, 10, 1), (None, 10, 20, 2)]
    ts.assert_complete()


def test_late_to_a_processor_which_completes_with_the_stream() -> None:
    side: ReplayProcessor[Any] = ReplayProcessor.create()
    events = [("a", 1), ("a", 15), ("a", 2), ("a", 3), ("a", 16)]
    ts = run(Flowable.from_iterable(events).tumbling_window(10, timestamp=ts0, late=side, aggregate="count"))
    ts.assert_complete()
    side.test().assert_result(("a", 2), ("a", 3))


def test_late_processor_receives_the_upstream_error() -> None:
    side: PublishProcessor[Any] = PublishProcessor.create()
    seen = side.test()
    src = Flowable.concat(Flowable.from_iterable([("a", 5), ("a", 1)]), Flowable.error(Boom("x")))
    ts = run(src.tumbling_window(1, timestamp=ts0, late=side, aggregate="count"))
    ts.assert_error(Boom)
    seen.assert_values(("a", 1)).assert_error(Boom).assert_no_violations()


def test_a_raising_late_callback_fails_the_stream() -> None:
    def boom(x: Any) -> None:
        raise Boom("late")

    check_raising(lambda f: f.tumbling_window(10, timestamp=ts0, late=boom), [("a", 1), ("a", 15), ("a", 2)])


# ---------------------------------------------------------------------------------------------
# Fired once; state released


def test_each_window_fires_once_and_its_state_is_released() -> None:
    tp: TestPublisher[tuple[str, int]] = TestPublisher.create()
    ts = Flowable.from_publisher(tp).tumbling_window(10, timestamp=ts0, key=k0, aggregate="count").test()
    op = ts.subscription
    tp.next(*[(f"u{i}", i % 10) for i in range(100)])
    assert op.state_size() == (1, 100, 0)  # type: ignore[union-attr]
    tp.next(("z", 10))
    assert op.state_size() == (1, 1, 0)  # type: ignore[union-attr]  # [0, 10) fired and released
    assert len(ts.values) == 100 and {w.key for w in ts.values} == {f"u{i}" for i in range(100)}
    tp.next(("z", 30))
    assert op.state_size() == (1, 1, 0)  # type: ignore[union-attr]
    tp.complete()
    assert op.state_size() == (0, 0, 0)  # type: ignore[union-attr]
    seen = [(w.key, w.start) for w in ts.values]
    assert len(seen) == len(set(seen)) == 102
    ts.assert_complete().assert_no_violations()


def test_session_keys_are_released_when_their_last_session_fires() -> None:
    tp: TestPublisher[tuple[str, int]] = TestPublisher.create()
    ts = Flowable.from_publisher(tp).session_window(5, timestamp=ts0, key=k0, aggregate="count").test()
    op = ts.subscription
    tp.next(("a", 0), ("b", 1), ("a", 3), ("c", 2))
    assert op.state_size()[:2] == (3, 3)  # type: ignore[union-attr]
    tp.next(("d", 8))  # watermark 8 passes a's [0, 8), b's [1, 6) and c's [2, 7)
    assert op.state_size()[:2] == (1, 1)  # type: ignore[union-attr]
    assert rows(ts.values) == [("b", 1, 6, 1), ("c", 2, 7, 1), ("a", 0, 8, 2)]
    tp.complete()
    ts.assert_complete().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# Backpressure, cancel


def test_backpressure_one_window_at_a_time() -> None:
    events = [("k", t) for t in range(0, 50, 3)]
    want = rows(run(Flowable.from_iterable(events).tumbling_window(10, timestamp=ts0, aggregate="count")).values)
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.from_iterable(events).tumbling_window(10, timestamp=ts0, aggregate="count").subscribe(ts)
    ts.assert_no_values()
    for i in range(1, len(want) + 1):
        ts.request(1)
        assert rows(ts.values) == want[:i]
    ts.assert_complete().assert_no_violations()
    assert rows(run_one_by_one(Flowable.from_iterable(events).hide().tumbling_window(
        10, timestamp=ts0, aggregate="count")).values) == want


def test_upstream_requests_stop_while_prefetch_fired_windows_wait() -> None:
    requests: list[int] = []
    src = Flowable.range(0, 10_000).do_on_request(requests.append)
    ts: TestSubscriber[Any] = TestSubscriber(0)
    src.tumbling_window(1, timestamp=float, aggregate="count", prefetch=16).subscribe(ts)
    # every element closes the previous element's window: 16 fired windows stop the requests
    asked = sum(requests)
    assert asked <= 32, requests
    op: Any = ts.subscription
    assert op.state_size()[2] <= 16 + 16  # the limit, plus the windows one batch fired
    ts.request(5)
    assert [w.value for w in ts.values] == [1] * 5
    ts.request(2**63 - 1)
    ts.assert_value_count(10_000).assert_complete().assert_no_violations()
    assert max(requests) <= 16


def test_cancel_stops_everything_and_releases_state() -> None:
    tp: TestPublisher[tuple[str, int]] = TestPublisher.create()
    ts: TestSubscriber[Any] = TestSubscriber(1)
    Flowable.from_publisher(tp).tumbling_window(10, timestamp=ts0, key=k0, aggregate="count").subscribe(ts)
    op: Any = ts.subscription
    tp.next(("a", 1), ("b", 2), ("a", 11), ("c", 25))
    assert rows(ts.values) == [("a", 0, 10, 1)]
    ts.cancel()
    assert tp.was_cancelled
    assert op.state_size() == (0, 0, 0)
    ts.request(10)
    assert len(ts.values) == 1
    ts.assert_not_complete().assert_no_errors().assert_no_violations()


def test_the_harness_scenarios_fused_hidden_one_by_one_cancel_and_upstream_error() -> None:
    events = [("a", 1), ("b", 3), ("a", 12), ("b", 11), ("a", 14), ("c", 27), ("a", 40), ("b", 41)]

    def op(f: Flowable[Any]) -> Flowable[Any]:
        return f.tumbling_window(10, timestamp=ts0, key=k0, allowed_lateness=5, aggregate="count")

    want = [Window("a", 0, 10, 1), Window("b", 0, 10, 1), Window("a", 10, 20, 2), Window("b", 10, 20, 1),
            Window("c", 20, 30, 1)]
    # after an upstream error the fired windows come first; the open ones ([40, 50)) are not emitted
    check_scenarios(op, events, want + [Window("a", 40, 50, 1), Window("b", 40, 50, 1)],
                    on_error_expected=lambda data: (want, Boom))


def test_sessions_and_sliding_through_the_harness() -> None:
    events = [("a", 1), ("b", 3), ("a", 4), ("b", 11), ("a", 14), ("c", 27), ("a", 40), ("b", 41)]
    ops: list[Callable[[Flowable[Any]], Flowable[Any]]] = [
        lambda f: f.session_window(4, timestamp=ts0, key=k0, allowed_lateness=3, aggregate="count"),
        lambda f: f.sliding_window(10, 5, timestamp=ts0, key=k0, allowed_lateness=3, aggregate="count"),
    ]
    for op in ops:
        want = run(op(Flowable.from_iterable(events))).values
        check_scenarios(op, events, want)


# ---------------------------------------------------------------------------------------------
# Errors


def test_upstream_error_emits_fired_windows_then_the_error_never_the_open_ones() -> None:
    tp: TestPublisher[tuple[str, int]] = TestPublisher.create()
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.from_publisher(tp).tumbling_window(10, timestamp=ts0, aggregate="count").subscribe(ts)
    tp.next(("a", 1), ("a", 12))
    tp.error(Boom("upstream"))
    ts.assert_no_values().assert_not_terminated()  # the fired window waits for demand, then the error
    ts.request(10)
    assert rows(ts.values) == [(None, 0, 10, 1)]
    ts.assert_error(Boom).assert_no_violations()


@pytest.mark.parametrize("where", ["timestamp", "key", "aggregate", "zero", "result", "process"])
def test_a_raising_user_function(where: str) -> None:
    def boom(*a: Any) -> Any:
        raise Boom(where)

    events = [("a", 1), ("b", 2), ("a", 11), ("b", 15), ("a", 30)]
    kw: dict[str, Any] = {"timestamp": ts0, "key": k0, "aggregate": "count"}
    if where == "timestamp":
        kw["timestamp"] = lambda e: boom() if e[1] == 15 else e[1]
    elif where == "key":
        kw["key"] = lambda e: boom() if e[1] == 15 else e[0]
    elif where == "aggregate":
        kw["aggregate"] = Aggregator(int, lambda a, e: boom() if e[1] == 15 else a + 1)
    elif where == "zero":
        kw["aggregate"] = Aggregator(lambda: boom(), operator.add)
    elif where == "result":
        kw["aggregate"] = Aggregator(int, lambda a, e: a + 1, result=boom)
    else:
        del kw["aggregate"]
        kw["process"] = lambda w: boom()
    if where == "process":
        # the windows reach process() after the synchronous source completed: nothing to cancel
        for src in (Flowable.from_iterable(events), Flowable.from_iterable(events).hide()):
            run(src.tumbling_window(10, **kw)).assert_error(Boom).assert_no_values()
        return
    with plugins.collect_errors() as undeliverable:
        ts = check_raising(lambda f: f.tumbling_window(10, **kw), events)
    assert not undeliverable
    if where in ("timestamp", "key", "aggregate"):
        # [0, 10) was passed by the watermark before the failing element: it is emitted, then the error
        assert rows(ts.values) == [("a", 0, 10, 1), ("b", 0, 10, 1)]


def test_a_raising_function_on_the_batch_fast_path_gives_the_one_by_one_signals() -> None:
    # itemgetter timestamps and keys take the one-window batch path; the aggregate fails in it
    events = [(f"k{i % 3}", i * 0.01) for i in range(50)] + [("k0", 10.0)]

    def agg(a: Any, e: Any) -> Any:
        if e[1] == 0.2:
            raise Boom("agg")
        return e

    def op(f: Flowable[Any]) -> Flowable[Any]:
        return f.tumbling_window(1, timestamp=ts0, key=k0, aggregate=agg, prefetch=50)

    fused = op(Flowable.from_iterable(events)).test()
    hidden = op(Flowable.from_iterable(events).hide()).test()
    assert fused.values == hidden.values == []
    fused.assert_error(Boom)
    hidden.assert_error(Boom)


@pytest.mark.parametrize("bad", [None, "soon", float("nan"), float("inf")])
def test_a_timestamp_that_is_not_a_finite_number(bad: Any) -> None:
    for src in (Flowable.from_iterable([1, 2, 3]), Flowable.from_iterable([1, 2, 3]).hide()):
        for op in ("tumbling_window", "sliding_window", "session_window"):
            args = (10, 5) if op == "sliding_window" else (10,)
            ts = run(getattr(src, op)(*args, timestamp=lambda x: bad if x == 2 else x, aggregate="count"))
            ts.assert_error(NoneElementError if bad is None else TypeError)
            assert "timestamp" in str(ts.errors[0])


def test_none_from_an_accumulator_function_is_an_error() -> None:
    for aggregate in (lambda a, x: None, Aggregator(lambda: None, operator.add), (int, lambda a, x: None),
                      Aggregator(int, operator.add, result=lambda a: None)):
        ts = run(Flowable.range(0, 5).tumbling_window(10, timestamp=float, aggregate=aggregate))
        ts.assert_error(NoneElementError)
    ts = run(Flowable.range(0, 5).tumbling_window(10, timestamp=float, process=lambda w: None))  # type: ignore[arg-type,return-value]
    ts.assert_error(NoneElementError)


@pytest.mark.parametrize(
    ("call", "exc", "text"),
    [
        (lambda f: f.tumbling_window(0, timestamp=float), ValueError, "size"),
        (lambda f: f.tumbling_window(-1, timestamp=float), ValueError, "size"),
        (lambda f: f.tumbling_window(float("inf"), timestamp=float), ValueError, "size"),
        (lambda f: f.tumbling_window("1", timestamp=float), TypeError, "size"),
        (lambda f: f.tumbling_window(1, timestamp=None), TypeError, "timestamp"),
        (lambda f: f.tumbling_window(1, timestamp=float, key=3), TypeError, "key"),
        (lambda f: f.tumbling_window(1, timestamp=float, allowed_lateness=-1), ValueError, "allowed_lateness"),
        (lambda f: f.tumbling_window(1, timestamp=float, late="ignore"), ValueError, "late"),
        (lambda f: f.tumbling_window(1, timestamp=float, late=3), TypeError, "late"),
        (lambda f: f.tumbling_window(1, timestamp=float, aggregate="avg"), ValueError, "aggregate"),
        (lambda f: f.tumbling_window(1, timestamp=float, aggregate=(0, operator.add)), TypeError, "zero"),
        (lambda f: f.tumbling_window(1, timestamp=float, aggregate=(int,)), ValueError, "tuple"),
        (lambda f: f.tumbling_window(1, timestamp=float, aggregate=3), TypeError, "aggregate"),
        (lambda f: f.tumbling_window(1, timestamp=float, aggregate="sum", process=lambda w: w), ValueError, "not both"),
        (lambda f: f.tumbling_window(1, timestamp=float, process=3), TypeError, "process"),
        (lambda f: f.tumbling_window(1, timestamp=float, idle_timeout=0), ValueError, "idle_timeout"),
        (lambda f: f.tumbling_window(1, timestamp=float, scheduler=TestScheduler()), ValueError, "idle_timeout"),
        (lambda f: f.tumbling_window(1, timestamp=float, idle_timeout=1, scheduler=3), TypeError, "scheduler"),
        (lambda f: f.tumbling_window(1, timestamp=float, prefetch=0), ValueError, "prefetch"),
        (lambda f: f.tumbling_window(1, timestamp=float, prefetch=True), TypeError, "prefetch"),
        (lambda f: f.sliding_window(5, 10, timestamp=float), ValueError, "slide"),
        (lambda f: f.sliding_window(5, 0, timestamp=float), ValueError, "slide"),
        (lambda f: f.session_window(0, timestamp=float), ValueError, "gap"),
        (lambda f: f.session_window(1, timestamp=float, aggregate=(int, operator.add)), ValueError, "merge"),
    ],
)
def test_bad_arguments_at_assembly(call: Callable[[Flowable[Any]], Any], exc: type[BaseException], text: str) -> None:
    with pytest.raises(exc, match=text):
        call(Flowable.range(0, 3))


# ---------------------------------------------------------------------------------------------
# The idle timer (virtual time)


def test_idle_timeout_advances_the_watermark_on_the_scheduler() -> None:
    sched = TestScheduler()
    tp: TestPublisher[tuple[str, int]] = TestPublisher.create()
    ts = Flowable.from_publisher(tp).tumbling_window(
        10, timestamp=ts0, allowed_lateness=5, aggregate="count", idle_timeout=2, scheduler=sched).test()
    tp.next(("a", 1), ("a", 12))  # watermark 7: [0, 10) open
    sched.advance_by(2)  # an element arrived in this period: no advance
    ts.assert_no_values()
    sched.advance_by(2)  # idle: watermark 9
    ts.assert_no_values()
    sched.advance_by(2)  # idle: watermark 11 -> [0, 10) fires on the scheduler's thread
    assert rows(ts.values) == [(None, 0, 10, 1)]
    tp.next(("a", 13))  # max event time is now 12 + 4 = 16 (advanced): 13 is not late for [10, 20)
    sched.advance_by(2)
    tp.complete()
    assert rows(ts.values) == [(None, 0, 10, 1), (None, 10, 20, 2)]
    ts.assert_complete().assert_no_violations()
    assert sched.pending == 0  # the timer is gone


def test_idle_timeout_does_not_advance_while_the_operator_itself_holds_the_upstream_back() -> None:
    sched = TestScheduler()
    tp: TestPublisher[tuple[str, int]] = TestPublisher.create()
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.from_publisher(tp).tumbling_window(
        1, timestamp=ts0, aggregate="count", idle_timeout=1, scheduler=sched, prefetch=4).subscribe(ts)
    tp.next(("a", 0), ("a", 1), ("a", 2), ("a", 3))  # three windows fired, nobody asked for them
    assert tp.requested == 3  # fewer than prefetch (4) wait: the upstream is replenished
    tp.next(("a", 4), ("a", 5), ("a", 6))  # six wait: the requests stop
    assert tp.requested == 0
    op: Any = ts.subscription
    wm = op.watermark
    sched.advance_by(10)
    assert op.watermark == wm  # not waiting for the upstream: not idle
    ts.request(10)
    assert len(ts.values) == 6
    ts.cancel()
    assert sched.pending == 0


def test_idle_timeout_cancel_disposes_the_timer() -> None:
    sched = TestScheduler()
    ts = Flowable.never().tumbling_window(1, timestamp=float, idle_timeout=1, scheduler=sched).test()
    assert sched.pending == 1
    ts.cancel()
    assert sched.pending == 0


# ---------------------------------------------------------------------------------------------
# Against the model: seeded random inputs


def _random_case(rnd: random.Random) -> tuple[list[Any], dict[str, Any]]:
    kind = rnd.choice(["tumbling", "sliding", "session"])
    n = rnd.randrange(0, 120)
    events: list[Any] = []
    t = 0
    for i in range(n):
        t += rnd.choice([0, 0, 1, 1, 2, 5])
        jitter = rnd.choice([0, 0, 0, 1, 3, 8])
        events.append((rnd.choice("abcd"), max(0, t - jitter), i))
    params: dict[str, Any] = {"kind": kind, "lateness": rnd.choice([0, 1, 3, 6])}
    if kind == "tumbling":
        params["size"] = rnd.choice([1, 2, 5, 7])
    elif kind == "sliding":
        params["size"] = rnd.choice([2, 6, 10])
        params["slide"] = rnd.choice([s for s in (1, 2, 3, 5) if s <= params["size"]])
    else:
        params["gap"] = rnd.choice([1, 2, 4])
    params["keyed"] = rnd.random() < 0.7
    params["getters"] = rnd.random() < 0.5
    params["agg"] = rnd.choice(["count", "list", "sum", "reduce", "fold", "process"])
    return events, params


def _operator(src: Flowable[Any], p: dict[str, Any], late: list[Any]) -> Flowable[Any]:
    tsf: Any = ts0 if p["getters"] else (lambda e: e[1])
    keyf: Any = None if not p["keyed"] else (k0 if p["getters"] else (lambda e: e[0]))
    agg: Any = None
    process: Any = None
    if p["agg"] in ("count", "list"):
        agg = p["agg"]
    elif p["agg"] == "sum":
        agg = Aggregator(int, lambda a, e: a + e[2], merge=operator.add)
    elif p["agg"] == "reduce":
        agg = lambda a, e: (a[0], a[1], a[2] + e[2])  # noqa: E731  # associative on the values
    elif p["agg"] == "fold":
        agg = Aggregator(list, lambda a, e: a + [e], merge=operator.add, result=tuple)
    else:
        process = lambda w: w.map(itemgetter(2)).to_list()  # noqa: E731
    common: dict[str, Any] = {"timestamp": tsf, "key": keyf, "allowed_lateness": p["lateness"], "late": late.append,
                              "aggregate": agg, "process": process, "prefetch": p.get("prefetch", 1024)}
    if p["kind"] == "tumbling":
        return src.tumbling_window(p["size"], **common)
    if p["kind"] == "sliding":
        return src.sliding_window(p["size"], p["slide"], **common)
    return src.session_window(p["gap"], **common)


def _expected_value(p: dict[str, Any], xs: list[Any]) -> Any:
    a = p["agg"]
    if a == "count":
        return len(xs)
    if a == "list":
        return xs
    if a == "sum":
        return sum(e[2] for e in xs)
    if a == "reduce":
        return xs[0] if len(xs) == 1 else (xs[0][0], xs[0][1], sum(e[2] for e in xs))
    if a == "fold":
        return tuple(xs)
    return [e[2] for e in xs]


@pytest.mark.parametrize("seed", range(40))
def test_against_the_model(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(10):
        events, p = _random_case(rnd)
        p["prefetch"] = rnd.choice([1, 3, 16, 1024])
        fired, late_want = _model(events, kind=p["kind"], size=p.get("size", 0), slide=p.get("slide", 0),
                                  gap=p.get("gap", 0), lateness=p["lateness"], ts=ts0, key=k0 if p["keyed"] else None)
        # merged sessions fold their parts in order of start, then the bridging element: the
        # model concatenates its lists the same way, so every value compares exactly
        want = [(k, s, e, _expected_value(p, xs)) for k, s, e, xs, _ in fired]
        for how in ("fused", "hidden", "one_by_one"):
            late: list[Any] = []
            src = Flowable.from_iterable(events)
            if how != "fused":
                src = src.hide()
            f = _operator(src, p, late)
            ts = run_one_by_one(f) if how == "one_by_one" else f.test()
            ts.assert_complete().assert_no_violations()
            got = rows(ts.values)
            assert got == want, (seed, how, p, events)
            assert late == late_want, (seed, how, p)
            seen = [(k, s) for k, s, _, _ in got]
            assert len(seen) == len(set(seen)), "a window fired twice"


def test_fused_and_hidden_sources_agree_on_a_large_input_with_the_batch_path() -> None:
    rnd = random.Random(7)
    # 60 s windows over 200 s, batches of ~8 s: most take the one-window batch path
    events = [(rnd.randrange(50), i * 0.01 - rnd.random() * 0.5) for i in range(20_000)]
    late_f: list[Any] = []
    late_h: list[Any] = []
    f = Flowable.from_iterable(events).tumbling_window(60, timestamp=ts0, key=k0, allowed_lateness=0.3,
                                                        late=late_f.append, aggregate="count")
    h = Flowable.from_iterable(events).hide().tumbling_window(60, timestamp=ts0, key=k0, allowed_lateness=0.3,
                                                               late=late_h.append, aggregate="count")
    a, b = run(f), run(h)
    assert a.values == b.values and late_f == late_h and late_f
    fired, late = _model(events, kind="tumbling", size=60, lateness=0.3, key=k0)
    assert rows(a.values) == [(k, s, e, len(xs)) for k, s, e, xs, _ in fired] and late == late_f


def test_no_undeliverable_errors_in_normal_runs() -> None:
    with plugins.collect_errors() as errors:
        run(Flowable.range(0, 100).tumbling_window(7, timestamp=float, aggregate="sum"))
        run(Flowable.range(0, 100).session_window(0.5, timestamp=float, key=lambda x: x % 3, aggregate="sum"))
    assert not errors


# ---------------------------------------------------------------------------------------------
# Threads: a real idle timer racing a source on another thread, a consumer on a third


def _pausing(e: Any) -> Any:
    """A source's map that pauses 10 ms at every half second of event time, so timer ticks (on
    their own thread) land in the stream."""
    if e[1] > 0 and int(e[1] * 1000) % 500 == 0:
        time.sleep(0.01)
    return e


@pytest.mark.parametrize("seed", range(3))
def test_idle_timer_thread_races_the_upstream_thread_and_nothing_is_lost_or_doubled(seed: int) -> None:
    from rstreams import schedulers

    rnd = random.Random(seed)
    n = 3000
    events = [(rnd.randrange(20), i * 0.001 + rnd.random() * 0.01, 1) for i in range(n)]
    late: list[Any] = []
    with plugins.collect_errors() as errors:
        f = (
            Flowable.from_iterable(events).map(_pausing).subscribe_on(schedulers.io())
            .tumbling_window(0.05, timestamp=ts0, key=k0, allowed_lateness=0.005, late=late.append,
                             aggregate=Aggregator(int, lambda a, e: a + e[2], merge=operator.add),
                             idle_timeout=0.001, scheduler=schedulers.computation(), prefetch=64)
            .observe_on(schedulers.single(), prefetch=4)
        )
        ts = f.test()
        ts.await_done(20)
    ts.assert_complete().assert_no_violations()
    assert not errors
    assert late, "the idle timer never moved the watermark past a pause"
    assert sum(w.value for w in ts.values) + len(late) == n  # every element counted once, or late
    seen = [(w.key, w.start) for w in ts.values]
    assert len(seen) == len(set(seen)), "a window fired twice"
    ends = [w.end for w in ts.values]
    assert ends == sorted(ends)


def test_cancel_from_another_thread_while_batches_are_folded() -> None:
    from rstreams import schedulers

    with plugins.collect_errors() as errors:
        for kind in ("tumbling", "session"):
            for _ in range(10):
                # endless (fused, so it arrives in batches): the cancel always comes before completion
                src = Flowable.range(0, 2**40).map(lambda i: (i % 50, i * 0.01)).subscribe_on(schedulers.io())
                f = (src.tumbling_window(1, timestamp=ts0, key=k0, aggregate="count") if kind == "tumbling"
                     else src.session_window(0.005, timestamp=ts0, key=k0, aggregate="count"))
                ts = f.test()
                ts.await_count(3, 5)
                ts.cancel()
                op: Any = ts.subscription
                n = len(ts.values)
                deadline = time.monotonic() + 5
                while op.state_size() != (0, 0, 0) and time.monotonic() < deadline:
                    time.sleep(0.001)  # the source thread finishes the batch it was folding
                assert op.state_size() == (0, 0, 0)
                ts.assert_no_errors().assert_not_complete().assert_no_violations()
                assert len(ts.values) >= n
    assert not errors


def test_a_cancel_racing_late_elements_never_signals_the_processor_after_its_completion() -> None:
    # race: late elements pushed on the upstream thread vs the cancel's completion on another
    import threading

    from rstreams import schedulers
    from rstreams.processors import UnicastProcessor

    for _ in range(100):
        p: UnicastProcessor[int] = UnicastProcessor.create()
        lt: TestSubscriber[int] = TestSubscriber()
        p.subscribe(lt)
        ts: TestSubscriber[Any] = TestSubscriber()
        stop = threading.Event()

        def late_forever(stop: threading.Event = stop) -> Any:
            yield 100
            while not stop.is_set():
                yield 1  # always late: the window [0, 10) closed when 100 arrived

        Flowable.from_iterable(late_forever).subscribe_on(schedulers.io()).tumbling_window(
            10, timestamp=lambda x: x, late=p
        ).subscribe(ts)
        lt.await_count(5, 5)
        ts.cancel()
        stop.set()
        lt.await_done(5).assert_complete().assert_no_errors().assert_no_violations()
        n = len(lt.values)
        time.sleep(0.001)
        assert len(lt.values) == n
