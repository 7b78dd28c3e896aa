"""tumbling_window, sliding_window, session_window: windows by *event time*, with a watermark.

The model (Beam's and Flink's, with Spark's watermark rule)
-----------------------------------------------------------
Each element carries its own time, read by ``timestamp(x)`` (seconds, int or float). Windows are
half-open intervals ``[start, end)`` of that time:

* ``tumbling_window(size)``: ``[i*size, (i+1)*size)`` for every integer ``i`` (Beam's
  ``FixedWindows``, Flink's ``TumblingEventTimeWindows``); an element at ``t`` is in window
  ``i = t // size``.
* ``sliding_window(size, slide)``: ``[i*slide, i*slide + size)`` (Beam's ``SlidingWindows``);
  ``0 < slide <= size``, so an element is in ``ceil(size / slide)`` windows (or one fewer, at a
  boundary).
* ``session_window(gap)``: per key, elements less than ``gap`` apart share a window
  ``[first, last + gap)``; a new element that bridges two sessions merges them (Beam's
  ``Sessions``, Flink's ``EventTimeSessionWindows``).

``key=`` (optional) windows each key separately (Beam's per-key windows, Flink's ``keyBy``); a
fired window carries its key (``None`` when not keyed; a key function may return ``None`` too).

The watermark is ``max event time seen - allowed_lateness`` (Spark's ``withWatermark``): it only
moves forward. A window fires, once, when the watermark reaches its end (``end <= watermark``);
at the upstream's completion every open window fires (the final watermark, as Flink's at the end
of bounded input). An element is *late* when a window it belongs to has ended at or before the
watermark (for a sliding element: any of its windows; for a session: the window it would make
after merging with the key's open sessions). Late elements are never lost silently: ``late=`` is a
callable (called with the element), a Processor (``on_next``; completed or failed with the
stream, completed when it is cancelled), ``"drop"`` (an explicit choice), or by default ``"error"``: the stream fails with
:class:`LateElementError` naming the element, its window and the watermark. A sliding element late
for some of its windows is still counted in its open ones and passed to ``late`` once.

``idle_timeout=`` (with ``scheduler=``, default computation) lets processing time move the
watermark when the input pauses: every ``idle_timeout`` seconds of scheduler time in which no
element arrived *while the operator was waiting for one* (it had requested more), the watermark
advances by ``idle_timeout``, as if event time went on at the speed of the clock. Without it (and
without ``early_interval``) no thread is involved and the operator is purely synchronous.

Early results (Beam's early panes in accumulating mode, Flink's ``CountTrigger`` /
``ContinuousProcessingTimeTrigger``, Spark's update output mode), accumulator path only:
``early_every=n`` queues a window's value so far for a key each time ``n`` more elements of that
window and key were folded; ``early_interval=s`` (a periodic task on ``scheduler``, serialized
with the upstream like the idle timer) queues it every ``s`` seconds for every window and key that
folded elements since its last result. An early result is a :class:`Window` whose ``final`` is
False (a subclass: the record keeps its four fields); its value is ``result(acc)`` of the
accumulator so far (a copy of the list for ``"list"``). The on-time result is unchanged: once per
window and key, final. Per element the order is as if each were alone: the on-time results its
watermark released, then the early results it triggered (by window end); so batches and
one-by-one delivery give the same signals. Early results are queued like on-time ones: they wait
for demand and count toward the ``prefetch`` limit below; none is dropped or conflated. The
counters (one int per window and key) are released with the window. A session merge sums its
parts' counters.

The result is one :class:`Window` per fired window and key: ``Window(key, start, end, value)``, an
immutable typed record. It is a ``NamedTuple`` rather than a frozen dataclass: fields by name as
well, unpacking (``key, start, end, value = w``), and the records of a fired window are built for
all its keys in one C-level pass (``tuple.__new__`` over ``zip``), where a frozen dataclass costs
a Python ``__init__`` per record (0.5 us here, against 0.1 us). ``value`` comes from one of two
paths:

* the accumulator path (``aggregate=``), folded as the elements arrive, so a window holds one
  accumulator per key, never its elements: ``"count"``, ``"sum"``, ``"min"``, ``"max"``,
  ``"list"`` (the default: the elements in arrival order), a reducer ``f(acc, x)`` (the first
  element starts the accumulator; for sessions ``f`` also merges two accumulators, so it must be
  associative), a tuple ``(zero, add)`` / ``(zero, add, merge)`` or an :class:`Aggregator`
  (Flink's ``AggregateFunction``, Beam's ``CombineFn``: ``zero()`` makes a fresh accumulator,
  ``add(acc, x)`` returns the next one, ``merge(a, b)`` joins two sessions, ``result(acc)`` makes
  the value). Session windows need ``merge`` (the built-ins and reducers have one).
* the general path (``process=``): the window's elements as an ordinary Flowable, which the
  user's function reduces as any other (``lambda w: w.reduce(add)``, ``w.count()``,
  ``w.distinct().count()``); every value it emits becomes a ``Window`` (one, for the usual
  reductions). It buffers the window's elements and runs through ``concat_map``, so windows stay in
  order and the returned Flowable may be asynchronous.

Why three methods and not one ``window(spec)``: Flowable already has ``window(count)`` and
``window_timed(duration)`` (RxJava's processing-time windows, which emit Flowables); the names
here say the kind of window the way Beam, Flink and Spark users say it (tumbling, sliding,
session), and an RxJava user reads ``source.tumbling_window(60, timestamp=...)`` as one more
fluent operator. They share every other parameter.

Order of the output: windows by end; windows with the same end in the order they were opened
(the first element of a key in that window; for a merged session, its oldest part).

Per element the user functions run in this order: ``timestamp`` (then the watermark moves), the
late check, ``key`` (for sessions before the late check: lateness depends on the key's sessions),
then ``aggregate``. An element whose function raised moved the watermark only if ``timestamp``
had succeeded.

Errors. A raising ``timestamp``/``key``/``aggregate``/``late`` function, a ``None`` from an
accumulator function, a timestamp that is not a finite number, or a late element with the default
``late="error"``: the upstream is cancelled, the windows the watermark had already passed are
emitted (they are complete), the open windows are discarded, then the error. An upstream error
does the same: open windows are NOT emitted after an error (their contents are unknown to be
complete), already fired ones still are. A Processor given as ``late`` receives the same
terminal signal.

Backpressure and state. The upstream is requested in batches: ``prefetch`` (default 1024)
elements at first, then ``prefetch - prefetch // 4`` more each time that many have arrived, but
only while fewer than ``prefetch`` fired windows wait for the downstream's demand: a slow
consumer stops the upstream (one batch may still fire many windows: at most the ones open then).
Memory is therefore bounded by the open windows (one accumulator per key and window, or the
elements for ``"list"``/``process``) plus ``prefetch`` queued windows; a window and its keys are
released when it fires, and a session key when its last session fires. Under unbounded demand
the queued windows are handed to a batch-capable consumer (``to_list``, ``observe_on``, ...) as one
list. The batch a fused source hands over (``on_next_batch``) is folded in one Python loop with
no call per element but the user's functions: windows are fired once per batch, with exactly the
results of the one-by-one path (a window's content is frozen once the watermark passes its end,
since any element for it is then late).

Concurrency. Without a timer (``idle_timeout``, ``early_interval``) only the upstream thread
touches the window state; the emission to the downstream is a wip/missed drain (any thread:
upstream signals and ``request``). With one, the upstream signals and the ticks (idle and early)
are serialized by a second wip counter with a task queue (race: tick thread vs upstream thread),
so no lock is held around user code.
"""

from __future__ import annotations

import heapq
import math
import operator
from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Final, Generic, Literal, NamedTuple, NoReturn, TypeVar, cast, final

from ..._internal import plugins
from ..._internal.atomics import AtomicInt
from ..._internal.drain import enter, leave
from ..._internal.requests import MAX_DEMAND, add_request, produced, validate_request
from ..._internal.subscriptions import CANCELLED, report_double_subscription
from ..._spec import Publisher, Subscriber, Subscription, null_element_message
from ...errors import LateElementError, NoneElementError
from ...schedulers import Scheduler, Worker
from .._base import none_result_error
from .._flowable import Flowable
from .._fused import batch_sink
from ._time_common import NOOP as _NOOP

__all__ = [
    "Window",
    "Aggregator",
    "LateElementError",
    "event_time_window",
]

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")
A = TypeVar("A")
R = TypeVar("R")

_MAX: Final = MAX_DEMAND
_MISSING: Final = object()
_NEG_INF: Final = float("-inf")

# accumulator modes (ints: one comparison per element on the hot path)
_COUNT: Final = 0
_LIST: Final = 1
_REDUCE: Final = 2
_FOLD: Final = 3


# ---------------------------------------------------------------------------------------------
# Public types


class Window(NamedTuple, Generic[K, V]):
    """One fired event-time window of one key: ``[start, end)`` and its aggregated ``value``.

    ``key`` is ``None`` for windows that are not keyed. An immutable typed record (a
    ``NamedTuple``: read its fields by name, or unpack it: ``key, start, end, value = w``); a
    tuple so that the operator builds a fired window's records for all its keys in one C-level
    pass. Like any NamedTuple it compares equal to a plain tuple with the same fields.

    ``final`` is ``True`` for the window's one on-time result and ``False`` for an *early* result
    (``early_every=`` / ``early_interval=``: the value so far, a later result of the same window
    and key follows). It is a property, not a fifth field, so four-field construction, unpacking
    and equality stay as they are: an early and a final result with the same fields compare
    equal; test ``w.final`` to tell them apart.

    Example::

        w = Window("alice", 0.0, 60.0, 3)
        assert (w.end - w.start, w.value, w.final) == (60.0, 3, True)
    """

    key: K
    start: float
    end: float
    value: V

    @property
    def final(self) -> bool:
        """True: the window's last result (fired when the watermark passed its end, or at completion)."""
        return True


class _EarlyWindow(Window[Any, Any]):
    """An early result (a pane before the on-time one): a ``Window`` whose ``final`` is False."""

    __slots__ = ()

    @property
    def final(self) -> bool:
        return False

    def __repr__(self) -> str:
        return (f"Window(key={self.key!r}, start={self.start!r}, end={self.end!r}, value={self.value!r}, "
                f"final=False)")


# Windows are built on the firing path, many per batch, with tuple's own constructor (C): no
# Python frame per record (NamedTuple's __new__ is one).
_tnew = tuple.__new__


def _window(key: Any, start: float, end: float, value: Any) -> Window[Any, Any]:
    w: Window[Any, Any] = _tnew(Window, (key, start, end, value))
    return w


@dataclass(frozen=True, slots=True)
class Aggregator(Generic[T, A, R]):
    """How a window folds its elements (Flink's ``AggregateFunction``, Beam's ``CombineFn``).

    ``zero()`` returns a fresh accumulator (pass ``int``, ``list``, ``lambda: (0, 0)``, not a
    value), ``add(acc, x)`` returns the next accumulator (it may mutate and return ``acc``),
    ``merge(a, b)`` joins the accumulators of two sessions that an element bridged (needed by
    ``session_window`` only), ``result(acc)`` turns the final accumulator into the window's value
    (default: the accumulator itself). ``None`` is never a valid accumulator or value. With early
    results, ``result`` also makes each early value from the accumulator so far: if ``add``
    mutates its accumulator, let ``result`` return a copy (or an immutable value).

    Example::

        mean = Aggregator(lambda: (0, 0), lambda a, x: (a[0] + x, a[1] + 1),
                          merge=lambda a, b: (a[0] + b[0], a[1] + b[1]), result=lambda a: a[0] / a[1])
    """

    zero: Callable[[], A]
    add: Callable[[A, T], A]
    merge: Callable[[A, A], A] | None = None
    result: Callable[[A], R] | None = None


#: What ``aggregate=`` accepts.
AggregateSpec = (
    Literal["count", "sum", "min", "max", "list"]
    | Aggregator[Any, Any, Any]
    | tuple[Callable[[], Any], Callable[[Any, Any], Any]]
    | tuple[Callable[[], Any], Callable[[Any, Any], Any], Callable[[Any, Any], Any]]
    | Callable[[Any, Any], Any]
    | None
)
#: What ``late=`` accepts.
LateSpec = Literal["error", "drop"] | Callable[[Any], object] | Subscriber[Any] | None


# ---------------------------------------------------------------------------------------------
# The accumulator, normalised


@final
class _Agg:
    """``aggregate=`` normalised: a mode, its functions, and ``fold(acc, x)``: the accumulator with
    ``x`` added (``acc`` is ``_MISSING`` for the first element of a window and key), its results
    None-checked. Every path folds through ``fold`` except the two modes the fixed-window loops
    inline because they are one C call (count: ``w.get(k, 0) + 1``, list: ``append``)."""

    __slots__ = ("mode", "fn", "zero", "merge", "result", "fold")

    def __init__(
        self,
        op: str,
        mode: int,
        fn: Callable[[Any, Any], Any] | None = None,
        zero: Callable[[], Any] | None = None,
        merge: Callable[[Any, Any], Any] | None = None,
        result: Callable[[Any], Any] | None = None,
    ) -> None:
        self.mode = mode
        self.fn = fn
        self.zero = zero
        self.merge = merge
        self.result = result
        self.fold = _make_fold(op, mode, fn, zero)


def _make_fold(op: str, mode: int, fn: Callable[[Any, Any], Any] | None,
               zero: Callable[[], Any] | None) -> Callable[[Any, Any], Any]:
    if mode == _COUNT:
        def count(a: Any, x: Any) -> Any:
            return 1 if a is _MISSING else a + 1

        return count
    if mode == _LIST:
        def append(a: Any, x: Any) -> Any:
            if a is _MISSING:
                return [x]
            a.append(x)
            return a

        return append
    add = cast("Callable[[Any, Any], Any]", fn)

    def fold(a: Any, x: Any) -> Any:
        if a is _MISSING:
            if zero is None:
                return x  # a reducer: the first element starts the accumulator
            a = zero()
            if a is None:
                raise none_result_error(op, "the aggregate's zero()")
        v = add(a, x)
        if v is None:
            raise none_result_error(op, "the aggregate")
        return v

    return fold


def _concat(a: list[Any], b: list[Any]) -> list[Any]:
    a.extend(b)
    return a


_BUILTINS: Final[dict[str, Callable[[str], _Agg]]] = {
    "count": lambda op: _Agg(op, _COUNT, merge=operator.add),
    "list": lambda op: _Agg(op, _LIST, merge=_concat),
    "sum": lambda op: _Agg(op, _REDUCE, operator.add, merge=operator.add),
    "min": lambda op: _Agg(op, _REDUCE, min, merge=min),
    "max": lambda op: _Agg(op, _REDUCE, max, merge=max),
}


def _agg_spec(op: str, aggregate: object, session: bool) -> _Agg:
    if aggregate is None:
        aggregate = "list"
    if isinstance(aggregate, str):
        make = _BUILTINS.get(aggregate)
        if make is None:
            raise ValueError(f"{op}(): aggregate must be one of {sorted(_BUILTINS)}, an Aggregator, a (zero, add[, merge]) "
                             f"tuple or a reducer f(acc, x); got {aggregate!r}")
        return make(op)
    if isinstance(aggregate, tuple):
        if len(aggregate) not in (2, 3):
            raise ValueError(f"{op}(): aggregate as a tuple is (zero, add) or (zero, add, merge); got {len(aggregate)} items")
        aggregate = Aggregator(*aggregate)
    if isinstance(aggregate, Aggregator):
        ag = aggregate
        for name, f in (("zero", ag.zero), ("add", ag.add)):
            if not callable(f):
                raise TypeError(f"{op}(): aggregate's {name} must be a callable (zero: a factory such as int or list, "
                                f"not a value); got {type(f).__name__}")
        for name, g in (("merge", ag.merge), ("result", ag.result)):
            if g is not None and not callable(g):
                raise TypeError(f"{op}(): aggregate's {name} must be a callable or None; got {type(g).__name__}")
        if session and ag.merge is None:
            raise ValueError(f"{op}(): session windows merge when an element bridges two sessions: the aggregate needs "
                             f"merge(a, b) (Aggregator(zero, add, merge=...) or (zero, add, merge)), or use process=")
        return _Agg(op, _FOLD, ag.add, ag.zero, ag.merge, ag.result)
    if callable(aggregate):
        fn = cast("Callable[[Any, Any], Any]", aggregate)
        return _Agg(op, _REDUCE, fn, merge=fn)
    raise TypeError(f"{op}(): aggregate must be a name, an Aggregator, a (zero, add[, merge]) tuple or a reducer "
                    f"f(acc, x); got {type(aggregate).__name__}")


# ---------------------------------------------------------------------------------------------
# Late elements


def _is_processor(x: object) -> bool:
    return all(callable(getattr(x, m, None)) for m in ("on_next", "on_error", "on_complete", "subscribe"))


def _late_error(op: str) -> Callable[[Any, float, float, float], None]:
    def fail(x: Any, start: float, end: float, wm: float) -> None:
        raise LateElementError(
            f"{op}(): element {_short(x)} is late: its window [{start}, {end}) ended at or before the watermark "
            f"{wm} (the latest event time seen minus allowed_lateness); pass late=<callable or Processor> to route "
            f"late elements, late='drop' to drop them, or a larger allowed_lateness"
        )

    return fail


def _drop(x: Any, start: float, end: float, wm: float) -> None:
    pass


def _short(x: object) -> str:
    try:
        s = repr(x)
    except Exception:  # a foreign repr must not hide the real error
        s = f"<{type(x).__name__}>"
    return s if len(s) <= 80 else s[:77] + "..."


class _LateProcessor:
    """A Processor given as ``late=``, as the operator signals it: elements, then exactly one
    terminal signal when the stream ends, fails or is cancelled (nothing more can be late then).
    The lock (re-entrant: the Processor's subscribers may cancel the stream from inside on_next)
    orders a late element on the upstream thread against a cancel's completion on the downstream
    thread, so the Processor never sees on_next after its on_complete (rule 1.7)."""

    __slots__ = ("_sink", "_lock", "_closed", "_op")

    def __init__(self, sink: Any, op: str) -> None:
        import threading

        self._sink = sink
        self._lock = threading.RLock()
        self._closed = False
        self._op = op

    def on_next(self, x: Any, start: float, end: float, wm: float) -> None:
        with self._lock:
            if not self._closed:
                self._sink.on_next(x)

    def finish(self, error: BaseException | None) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if error is None:
                    self._sink.on_complete()
                else:
                    self._sink.on_error(error)
            except Exception as e:
                plugins.on_error(e, f"{self._op}(): the late-element Processor raised")


class _BadTime(Exception):
    """Raised inside the loops for a timestamp that is not a finite number (rewritten by the caller)."""


def _time_error(op: str, t: object) -> BaseException:
    if t is None:
        return NoneElementError(f"{op}(): the timestamp function returned None; it must return the element's event "
                                f"time in seconds (int or float)")
    return TypeError(f"{op}(): the timestamp function returned {_short(t)} ({type(t).__name__}); it must return the "
                     f"element's event time in seconds, a finite int or float")


def _is_bad_time(t: object) -> bool:
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        try:
            return not math.isfinite(t)  # type: ignore[arg-type]  # numpy floats, Decimal, Fraction
        except Exception:
            return True
    return not math.isfinite(t)


# ---------------------------------------------------------------------------------------------
# Window state: what the three kinds share


class _Store:
    """The open windows of one subscription and the watermark. Touched by one thread at a time
    (the upstream's, or whoever holds the operator's serializer when a timer runs).

    Early results (``every``: elements of a window and key per early result; ``early``: any early
    trigger, so the loops count elements per window and key). ``trig`` collects the early results
    one element triggered; ``_flush_early`` queues them after the on-time results the element's
    watermark released, in order of window end."""

    __slots__ = ("op", "tsf", "keyf", "lateness", "agg", "maxts", "wm", "late", "fired", "every", "early", "out",
                 "trig")

    def __init__(self, op: str, tsf: Callable[[Any], Any], keyf: Callable[[Any], Any] | None,
                 lateness: float, agg: _Agg, late: Callable[[Any, float, float, float], None],
                 every: int | None, early: bool) -> None:
        self.op = op
        self.tsf = tsf
        self.keyf = keyf
        self.lateness = lateness
        self.agg = agg
        self.maxts: Any = _NEG_INF
        self.wm: Any = _NEG_INF
        self.late = late
        self.fired = 0  # windows fired so far (introspection and tests)
        self.every = _MAX if every is None else every
        self.early = early
        self.out: deque[Any] = deque()  # the operator's queue (set by the subscriber)
        self.trig: list[tuple[Any, Any, Any, Any]] = []  # (key, start, end, accumulator)

    def add(self, items: Iterable[Any]) -> None:
        raise NotImplementedError

    def due(self) -> bool:
        """True if a window ends at or before the watermark."""
        raise NotImplementedError

    def fire(self, out: deque[Any], everything: bool) -> None:
        """Append the windows that end at or before the watermark (all of them when ``everything``)
        to ``out``, in order of end then opening, and release them."""
        raise NotImplementedError

    def fire_early(self) -> None:
        """Queue an early result for every open window and key that folded elements since its last
        result (the ``early_interval`` timer), in order of end then opening."""
        raise NotImplementedError

    def clear(self) -> None:
        self.trig = []

    def size(self) -> tuple[int, int]:
        """(open windows, accumulators: one per key and window)."""
        raise NotImplementedError

    def advance(self, dt: float) -> None:
        """Idle time: the watermark moves by ``dt`` (nothing to move before the first element)."""
        if self.maxts != _NEG_INF:
            self.maxts += dt
            self.wm = self.maxts - self.lateness

    def value(self, acc: Any) -> Any:
        agg = self.agg
        if agg.result is None:
            return acc
        v = agg.result(acc)
        if v is None:
            raise none_result_error(self.op, "the aggregate's result")
        return v

    def _stop(self, e: Exception, maxts: Any, wm: Any, t: Any) -> NoReturn:
        """A loop failed at an element of time ``t``: keep the watermark the elements before moved
        it to, and raise (a timestamp that is not a finite number as the timestamp's error)."""
        self.maxts = maxts
        self.wm = wm
        if isinstance(e, _BadTime) or (isinstance(e, TypeError) and _is_bad_time(t)):
            raise _time_error(self.op, t) from (None if isinstance(e, _BadTime) else e)
        raise e

    def _flush_early(self, maxts: Any, wm: Any) -> None:
        """Queue the early results one element triggered, after the on-time results its watermark
        released (as if every element were processed alone: batches give the same order)."""
        self.maxts = maxts
        self.wm = wm
        if self.due():
            self.fire(self.out, False)
        trig = self.trig
        self.trig = []
        if len(trig) > 1:
            trig.sort(key=_by_end)  # a sliding element's windows are visited latest first
        for k, start, end, acc in trig:
            self._queue_early(k, start, end, acc)

    def _queue_early(self, k: Any, start: Any, end: Any, acc: Any) -> None:
        v = list(acc) if self.agg.mode == _LIST else self.value(acc)  # a snapshot: the list grows on
        self.out.append(_tnew(_EarlyWindow, (k, start, end, v)))


def _by_end(entry: tuple[Any, Any, Any, Any]) -> Any:
    return entry[2]


# ---------------------------------------------------------------------------------------------
# Window state: fixed windows (tumbling and sliding)


@final
class _FixedStore(_Store):
    """Tumbling (``slide == size``) and sliding windows: window ``q`` is ``[q*slide, q*slide + size)``.

    ``wins`` maps ``q`` to ``{key: accumulator}`` (keys in the order their window opened); ``heap``
    holds the open ``q``s (their ends grow with ``q``); with early results, ``pend`` maps ``q`` to
    ``{key: elements folded since its last result}``."""

    __slots__ = ("size_", "slide", "wins", "heap", "getters", "pend")

    def __init__(self, op: str, tsf: Callable[[Any], Any], keyf: Callable[[Any], Any] | None, lateness: float,
                 agg: _Agg, late: Callable[[Any, float, float, float], None], every: int | None, early: bool,
                 size: float, slide: float) -> None:
        super().__init__(op, tsf, keyf, lateness, agg, late, every, early)
        self.size_ = size
        self.slide = slide
        self.wins: dict[Any, dict[Any, Any]] = {}
        self.heap: list[Any] = []
        self.pend: dict[Any, dict[Any, int]] = {}
        self.getters = slide == size and not early and _is_getter(tsf) and (keyf is None or _is_getter(keyf))

    def add(self, items: Iterable[Any]) -> None:
        if self.slide != self.size_:
            self._add_sliding(items)
            return
        if self.getters and len(items) > 8 and self._add_one_window(items):  # type: ignore[arg-type]
            return
        tsf = self.tsf
        keyf = self.keyf
        size = self.size_
        lateness = self.lateness
        wins = self.wins
        heap = self.heap
        mode = self.agg.mode
        fold = self.agg.fold
        early = self.early
        maxts = self.maxts
        wm = self.wm
        cq: Any = _MISSING
        w: dict[Any, Any] = {}
        t: Any = 0.0
        try:
            for x in items:
                t = tsf(x)
                if t > maxts:
                    maxts = t
                    wm = t - lateness
                q = t // size
                if t < wm and q * size + size <= wm:
                    self.late(x, q * size, q * size + size, wm)
                    continue
                if q != cq:  # a NaN q (NaN or infinite t) is never equal: checked here only
                    if q != q:
                        raise _BadTime
                    w = wins.get(q)  # type: ignore[assignment]
                    if w is None:
                        w = wins[q] = Counter() if mode == 0 else {}
                        heapq.heappush(heap, q)
                    cq = q
                k = None if keyf is None else keyf(x)
                if mode == 0:  # count
                    w[k] = w.get(k, 0) + 1
                elif mode == 1:  # list
                    w.setdefault(k, []).append(x)
                else:
                    w[k] = fold(w.get(k, _MISSING), x)
                if early:
                    self._count(q, k, w)
                    if self.trig:
                        self._flush_early(maxts, wm)
        except Exception as e:
            self._stop(e, maxts, wm, t)
        self.maxts = maxts
        self.wm = wm

    def _add_one_window(self, items: list[Any]) -> bool:
        """The batch fast path: when ``timestamp`` and ``key`` are C getters (``itemgetter``,
        ``attrgetter``: no side effects, so calling them in one pass per batch is not observable),
        no element of the batch can be late and all fall in one window, the batch is folded into
        that window at C speed (``Counter.update`` for counts). False (nothing changed) when any of
        that does not hold: the exact loop then runs, with its per-element checks and errors."""
        keyf = self.keyf
        try:
            ts = list(map(self.tsf, items))
            ks = None if keyf is None else list(map(keyf, items))
            lo = min(ts)
            hi = max(ts)
            total = sum(ts)
        except Exception:
            return False
        if total - total != 0:
            return False  # NaN or infinity somewhere (min/max may skip a NaN): the exact loop says which
        maxts = self.maxts
        if hi > maxts:
            maxts = hi
        wm = maxts - self.lateness
        size = self.size_
        q = lo // size
        if q != hi // size or q * size + size <= wm:
            return False  # the batch spans windows, or its window may have closed part-way
        # one window still open at the batch's final watermark: no element of it is late (each
        # one's watermark is at most the final one)
        wins = self.wins
        w: Any = wins.get(q)
        if w is None:
            w = wins[q] = Counter() if self.agg.mode == 0 else {}
            heapq.heappush(self.heap, q)
        mode = self.agg.mode
        if mode == 0:
            if ks is None:
                w[None] = w.get(None, 0) + len(ts)
            else:
                w.update(ks)  # a Counter: C-speed counting
            self.maxts = maxts
            self.wm = wm
            return True
        if ks is None:
            ks = [None] * len(items)
        fold = self.agg.fold
        i = 0
        try:
            for k, x in zip(ks, items, strict=True):
                if mode == 1:
                    w.setdefault(k, []).append(x)
                else:
                    w[k] = fold(w.get(k, _MISSING), x)
                i += 1
        except Exception:
            # the watermark as the exact loop leaves it: moved by the elements up to the failing one
            m = max(ts[: i + 1])
            if m > self.maxts:
                self.maxts = m
                self.wm = m - self.lateness
            raise
        self.maxts = maxts
        self.wm = wm
        return True

    def _add_sliding(self, items: Iterable[Any]) -> None:
        tsf = self.tsf
        keyf = self.keyf
        size = self.size_
        slide = self.slide
        lateness = self.lateness
        wins = self.wins
        heap = self.heap
        mode = self.agg.mode
        fold = self.agg.fold
        early = self.early
        maxts = self.maxts
        wm = self.wm
        t: Any = 0.0
        try:
            for x in items:
                t = tsf(x)
                if t > maxts:
                    maxts = t
                    wm = t - lateness
                q = t // slide
                if q != q:
                    raise _BadTime
                k: Any = _MISSING
                missed: Any = None
                while True:  # the windows of t, latest first: [q*slide, q*slide + size) while it holds t
                    start = q * slide
                    end = start + size
                    if end <= t:
                        break
                    if end <= wm:  # closed: so are all earlier ones
                        missed = (start, end)
                        break
                    if k is _MISSING:
                        k = None if keyf is None else keyf(x)
                    w = wins.get(q)
                    if w is None:
                        w = wins[q] = {}
                        heapq.heappush(heap, q)
                    if mode == 0:
                        w[k] = w.get(k, 0) + 1
                    elif mode == 1:
                        w.setdefault(k, []).append(x)
                    else:
                        w[k] = fold(w.get(k, _MISSING), x)
                    if early:
                        self._count(q, k, w)
                    q -= 1
                if missed is not None:
                    self.late(x, missed[0], missed[1], wm)
                if early and self.trig:
                    self._flush_early(maxts, wm)
        except Exception as e:
            self._stop(e, maxts, wm, t)
        self.maxts = maxts
        self.wm = wm

    def _count(self, q: Any, k: Any, w: dict[Any, Any]) -> None:
        """One more element folded into window ``q``, key ``k``: an early result every ``every``."""
        p = self.pend.get(q)
        if p is None:
            p = self.pend[q] = {}
        c = p.get(k, 0) + 1
        if c >= self.every:
            c = 0
            start = q * self.slide
            self.trig.append((k, start, start + self.size_, w[k]))
        p[k] = c

    def fire_early(self) -> None:
        wins = self.wins
        slide = self.slide
        for q in sorted(self.pend):  # ends grow with q
            p = self.pend[q]
            w = wins.get(q)
            if w is None:
                continue
            start = q * slide
            for k, c in p.items():
                if c:
                    p[k] = 0
                    self._queue_early(k, start, start + self.size_, w[k])

    def due(self) -> bool:
        h = self.heap
        return bool(h) and h[0] * self.slide + self.size_ <= self.wm

    def fire(self, out: deque[Any], everything: bool) -> None:
        heap = self.heap
        wins = self.wins
        slide = self.slide
        size = self.size_
        wm = self.wm
        mode = self.agg.mode
        plain = self.agg.result is None or mode < 2
        append = out.append
        early = self.early
        while heap:
            q = heap[0]
            start = q * slide
            end = start + size
            if not everything and end > wm:
                return
            heapq.heappop(heap)
            w = wins.pop(q, None)
            if w is None:
                continue  # cleared by a cancel from another thread meanwhile
            self.fired += len(w)
            if early:
                self.pend.pop(q, None)
            if plain:
                out.extend(map(_tnew, repeat(Window), zip(w.keys(), repeat(start), repeat(end), w.values())))
            else:
                for k, a in w.items():
                    append(_window(k, start, end, self.value(a)))

    def clear(self) -> None:
        super().clear()
        self.wins = {}
        self.heap = []
        self.pend = {}

    def size(self) -> tuple[int, int]:
        return len(self.wins), sum(map(len, self.wins.values()))


# ---------------------------------------------------------------------------------------------
# Window state: sessions


@final
class _Session:
    __slots__ = ("start", "end", "acc", "seq", "live", "n")

    def __init__(self, start: Any, end: Any, acc: Any, seq: int) -> None:
        self.start = start
        self.end = end
        self.acc = acc
        self.seq = seq
        self.live = True
        self.n = 0  # elements folded since its last early result


@final
class _SessionStore(_Store):
    """Sessions: ``keys`` maps a key to its open sessions (usually one); ``heap`` holds
    ``(end, seq, key, session)`` with the end the session had when pushed: an entry popped with an
    older end is pushed again with the current one, an entry of a merged-away session is skipped."""

    __slots__ = ("gap", "keys", "heap", "seq")

    def __init__(self, op: str, tsf: Callable[[Any], Any], keyf: Callable[[Any], Any] | None, lateness: float,
                 agg: _Agg, late: Callable[[Any, float, float, float], None], every: int | None, early: bool,
                 gap: float) -> None:
        super().__init__(op, tsf, keyf, lateness, agg, late, every, early)
        self.gap = gap
        self.keys: dict[Any, list[_Session]] = {}
        self.heap: list[tuple[Any, int, Any, _Session]] = []
        self.seq = 0

    def add(self, items: Iterable[Any]) -> None:
        tsf = self.tsf
        keyf = self.keyf
        gap = self.gap
        lateness = self.lateness
        keys = self.keys
        fold = self.agg.fold
        early = self.early
        maxts = self.maxts
        wm = self.wm
        t: Any = 0.0
        try:
            for x in items:
                t = tsf(x)
                if t > maxts:
                    maxts = t
                    wm = t - lateness
                end = t + gap
                if end - end != 0:  # NaN or infinite
                    raise _BadTime
                k = None if keyf is None else keyf(x)
                sessions = keys.get(k)
                # the key's open sessions this element touches (a session ended at or before the
                # watermark is closed even if it has not fired yet: the one-by-one path fired it)
                touch = None if sessions is None else [s for s in sessions if s.end > wm and s.start < end and t < s.end]
                if not touch:
                    if end <= wm:
                        self.late(x, t, end, wm)
                        continue
                    s = _Session(t, end, fold(_MISSING, x), self.seq)
                    self.seq += 1
                    if sessions is None:
                        keys[k] = [s]
                    else:
                        sessions.append(s)
                    heapq.heappush(self.heap, (end, s.seq, k, s))
                elif len(touch) == 1:
                    s = touch[0]
                    s.acc = fold(s.acc, x)
                    if t < s.start:
                        s.start = t
                    if end > s.end:
                        s.end = end  # its heap entry is refreshed when it reaches the top
                else:
                    s = self._merge(sessions, touch, x, t, end)  # type: ignore[arg-type]
                if early:
                    s.n += 1
                    if s.n >= self.every:
                        s.n = 0
                        self.trig.append((k, s.start, s.end, s.acc))
                        self._flush_early(maxts, wm)
        except Exception as e:
            self._stop(e, maxts, wm, t)
        self.maxts = maxts
        self.wm = wm

    def _merge(self, sessions: list[_Session], touch: list[_Session], x: Any, t: Any, end: Any) -> _Session:
        """``x`` bridges the sessions ``touch``: merge them (in order of start) into the oldest one."""
        touch.sort(key=_by_start)
        merge = self.agg.merge
        acc = touch[0].acc
        for o in touch[1:]:
            acc = merge(acc, o.acc)  # type: ignore[misc]
            if acc is None:
                raise none_result_error(self.op, "the aggregate's merge")
        acc = self.agg.fold(acc, x)
        keep = min(touch, key=_by_seq)
        keep.acc = acc
        keep.start = min(t, touch[0].start)
        keep.end = max(end, max(s.end for s in touch))
        keep.n = sum(s.n for s in touch)  # the merged session's early count covers its parts
        for o in touch:
            if o is not keep:
                o.live = False
                sessions.remove(o)
        return keep

    def fire_early(self) -> None:
        ready = [(s.end, s.seq, k, s) for k, sessions in self.keys.items() for s in sessions if s.n]
        ready.sort(key=_by_end_seq)
        for _, _, k, s in ready:
            s.n = 0
            self._queue_early(k, s.start, s.end, s.acc)

    def due(self) -> bool:
        h = self.heap
        return bool(h) and h[0][0] <= self.wm

    def fire(self, out: deque[Any], everything: bool) -> None:
        heap = self.heap
        keys = self.keys
        wm = self.wm
        if everything:
            heap.sort()  # pops stay in order; stale entries are refreshed below
        while heap:
            end, seq, k, s = heap[0]
            if not everything and end > wm:
                return
            heapq.heappop(heap)
            if not s.live:
                continue  # merged into an older session
            if s.end != end:
                heapq.heappush(heap, (s.end, seq, k, s))  # it grew since: its turn comes later
                continue
            s.live = False
            sessions = keys.get(k)
            if sessions is None or s not in sessions:
                continue  # cleared by a cancel from another thread meanwhile
            sessions.remove(s)
            if not sessions:
                del keys[k]
            self.fired += 1
            out.append(_window(k, s.start, s.end, self.value(s.acc)))

    def clear(self) -> None:
        super().clear()
        self.keys = {}
        self.heap = []

    def size(self) -> tuple[int, int]:
        return len(self.keys), sum(map(len, self.keys.values()))


def _is_getter(f: object) -> bool:
    return type(f) in (operator.itemgetter, operator.attrgetter)


def _by_start(s: _Session) -> Any:
    return s.start


def _by_seq(s: _Session) -> int:
    return s.seq


def _by_end_seq(entry: tuple[Any, int, Any, _Session]) -> tuple[Any, int]:
    return entry[0], entry[1]


# ---------------------------------------------------------------------------------------------
# The operator


@final
class _EventTimeSubscriber:
    """Upstream side: folds elements into the store, fires windows into ``_ready``. Downstream
    side: a wip/missed drain emits ``_ready`` up to demand and replenishes the upstream."""

    _rs_no_wrap = True
    __slots__ = (
        "_downstream", "_upstream", "_store", "_ready", "_requested", "_wip", "_done", "_cancelled",
        "_terminal", "_error", "_bad", "_received", "_asked", "_prefetch", "_low", "_max_ready",
        "_late_sink", "_worker", "_idle", "_interval", "_seen", "_guard", "_tasks", "_timers", "_batch_out", "_op",
        "accepts_batches", "__weakref__",
    )

    def __init__(self, downstream: Subscriber[Any], store: _Store, prefetch: int, late_sink: Any,
                 worker: Worker | None, idle: float | None, interval: float | None) -> None:
        self._downstream = downstream
        self._upstream: Subscription = CANCELLED
        self._store = store
        self._ready: deque[Window[Any, Any]] = deque()
        store.out = self._ready
        self._requested = AtomicInt(0)  # race: request (downstream thread) vs drain (any thread)
        self._wip = AtomicInt(0)  # the emission drain (race: upstream thread vs request thread)
        self._done = False  # the upstream side ended (inside the serialized upstream side only)
        self._cancelled = False
        self._terminal = False  # written after the last window was queued; read before _ready
        self._error: BaseException | None = None
        self._bad: BaseException | None = None  # rule 3.9: signalled at once, before queued windows
        self._received = 0  # upstream thread only (read racily by the drain: monotone)
        self._asked = 0  # the drain only
        self._prefetch = prefetch
        self._low = prefetch // 4  # replenish when this few requested elements are still due
        self._max_ready = prefetch
        self._late_sink = late_sink
        self._worker = worker
        self._idle = idle
        self._interval = interval
        self._seen = False
        # with a timer, the upstream signals and the ticks run one at a time (race: tick
        # thread vs upstream thread); whoever moves _guard from 0 runs the queued tasks too
        self._guard: AtomicInt | None = AtomicInt(0) if worker is not None else None
        self._tasks: deque[Callable[[], None]] = deque()
        self._timers: list[Any] = []
        self._batch_out = batch_sink(downstream)
        self._op = store.op
        self.accepts_batches = True

    # -- serializing the upstream side (only with an idle timer) ----------------------------------
    def _serial(self, task: Callable[[], None]) -> None:
        g = self._guard
        if g is None:
            task()
            return
        self._tasks.append(task)
        if not enter(g):
            return
        missed = 1
        tasks = self._tasks
        while True:
            while tasks:
                tasks.popleft()()
            missed = leave(g, missed)
            if missed == 0:
                return

    # -- upstream side ----------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise NoneElementError(null_element_message("on_subscribe"))  # rule 2.13
        if self._upstream is not CANCELLED:
            subscription.cancel()  # rule 2.5
            report_double_subscription(self._op)
            return
        self._upstream = subscription
        # the timers start before the downstream's on_subscribe: a downstream that requests there
        # may run a synchronous upstream to its end inside it, and the idle and early ticks must
        # run meanwhile (a cancel from on_subscribe disposes them again)
        w = self._worker
        if w is not None:
            idle = self._idle
            if idle is not None:
                self._timers.append(w.schedule_periodic(self._timer_task(self._idle_tick), idle, idle))
            every = self._interval
            if every is not None:
                self._timers.append(w.schedule_periodic(self._timer_task(self._early_tick), every, every))
        self._downstream.on_subscribe(self)
        self._drain()

    def on_next(self, item: Any) -> None:
        if item is None:
            raise NoneElementError(null_element_message("on_next"))  # rule 2.13
        self._received += 1
        if self._guard is None:
            self._process((item,))
        else:
            self._serial(lambda: self._process((item,)))
        self._drain()

    def on_next_batch(self, items: list[Any]) -> None:
        """Library-internal batch protocol: one loop over the batch, windows fired once after it."""
        self._received += len(items)
        if self._guard is None:
            self._process(items)
        else:
            self._serial(lambda: self._process(items))
        self._drain()

    def _process(self, items: Iterable[Any]) -> None:
        if self._done or self._cancelled:
            return
        st = self._store
        self._seen = True
        try:
            st.add(items)
        except Exception as e:
            if self._cancelled:
                return  # race: a cancel cleared the state under this batch; nobody waits for an error
            self._upstream.cancel()
            self._fail(e)
            return
        try:
            if st.due():
                st.fire(self._ready, False)
        except Exception as e:  # the aggregate's result() failed: what was queued before it stays
            if self._cancelled:
                return
            self._upstream.cancel()
            self._end(e)
            return
        if self._cancelled:
            # race: cancel (another thread) vs this batch: what the batch added or fired after the
            # cancel cleared the state is released here (the drain, held by that thread, may be gone)
            self._store.clear()
            self._ready.clear()

    def _fail(self, error: BaseException) -> None:
        """A user function failed (or an element was late): emit what the watermark passed, drop the
        rest, end with ``error`` (serialized upstream side)."""
        try:
            self._fire_due()
        except Exception as e2:  # the result function failed while firing: report the first error
            plugins.on_error(e2, f"{self._op}(): an error while firing windows after an earlier error")
        self._end(error)

    def _end(self, error: BaseException | None) -> None:
        self._done = True
        self._store.clear()
        for t in self._timers:
            t.dispose()
        w = self._worker
        if w is not None:
            w.dispose()
        self._error = error
        self._terminal = True
        sink = self._late_sink
        if sink is not None:
            self._late_sink = None
            sink.finish(error)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise NoneElementError(null_element_message("on_error"))  # rule 2.13
        self._serial(lambda: self._upstream_error(error))
        self._drain()

    def _upstream_error(self, error: BaseException) -> None:
        if self._done:
            plugins.on_error(error, f"{self._op}(): on_error after termination")
            return
        self._end(error)  # open windows are discarded: their contents are not known to be complete

    def on_complete(self) -> None:
        self._serial(self._upstream_complete)
        self._drain()

    def _upstream_complete(self) -> None:
        if self._done:
            return
        try:
            self._store.fire(self._ready, True)  # the final watermark: every open window fires
        except Exception as e:
            self._end(e)
            return
        self._end(None)

    def _timer_task(self, step: Callable[[], None]) -> Callable[[], None]:
        """A periodic task of the worker: ``step`` serialized with the upstream signals, then the drain."""

        def tick() -> None:
            self._serial(step)
            self._drain()

        return tick

    def _on_timer(self, fire: Callable[[], None]) -> None:
        """Fire on a timer (serialized upstream side); a failing ``result`` ends the stream."""
        try:
            fire()
        except Exception as e:
            self._upstream.cancel()
            self._end(e)

    def _fire_due(self) -> None:
        st = self._store
        if st.due():
            st.fire(self._ready, False)

    def _idle_tick(self) -> None:
        if self._done or self._cancelled:
            return
        if self._seen:
            self._seen = False
            return
        if self._asked <= self._received:
            return  # not waiting for the upstream: the pause is this operator's backpressure
        idle = self._idle
        assert idle is not None
        self._store.advance(idle)
        self._on_timer(self._fire_due)

    def _early_tick(self) -> None:
        if not (self._done or self._cancelled):
            self._on_timer(self._store.fire_early)

    # -- downstream side --------------------------------------------------------------------------
    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self._bad = err  # rule 3.9
                self._upstream.cancel()
                self._dispose_timer()
                # the stream fails with the error: so does the late= Processor
                self._serial(lambda: self._release(err))
                self._drain()
                return
        add_request(self._requested, n)
        self._drain()

    def _dispose_timer(self) -> None:
        w = self._worker
        if w is not None:
            w.dispose()

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._upstream.cancel()
        self._dispose_timer()
        self._serial(lambda: self._release(None))  # nothing can be late any more: the Processor completes
        self._drain()

    def _release(self, error: BaseException | None) -> None:
        """Cancelled or failed by a bad request: the state is released and the late= Processor ends
        (with ``error``, or completes). Serialized with the upstream signals and the timers when
        there are timers (``_serial``: a tick never walks a store being cleared); a batch in
        progress on the upstream thread keeps its own references."""
        self._store.clear()
        sink = self._late_sink
        self._late_sink = None
        if sink is not None:
            sink.finish(error)

    def _drain(self) -> None:
        if not enter(self._wip):
            return
        missed = 1
        ready = self._ready
        d = self._downstream
        requested = self._requested
        while True:
            if self._cancelled:
                ready.clear()
                self._downstream = _NOOP  # rule 3.13
                return
            bad = self._bad
            if bad is not None:
                ready.clear()
                self._cancelled = True
                self._downstream = _NOOP
                d.on_error(bad)
                return
            terminal = self._terminal  # read before _ready: the last windows were queued before it
            r = requested.get()
            if ready:
                if r >= _MAX:
                    nb = self._batch_out
                    n = len(ready)
                    if nb is not None and n > 1:
                        pop = ready.popleft
                        nb([pop() for _ in repeat(None, n)])
                    else:
                        while ready:
                            d.on_next(ready.popleft())
                            if self._cancelled:
                                break
                else:
                    e = 0
                    while e != r and ready:
                        d.on_next(ready.popleft())
                        e += 1
                        if self._cancelled:
                            break
                    if e:
                        produced(requested, e)
                if self._cancelled:
                    continue
            if terminal and not ready:
                self._cancelled = True
                self._downstream = _NOOP
                err = self._error
                if err is None:
                    d.on_complete()
                else:
                    d.on_error(err)
                return
            if not self._done and len(ready) < self._max_ready:
                outstanding = self._asked - self._received
                if outstanding <= self._low:
                    n = self._prefetch - outstanding
                    self._asked += n
                    self._upstream.request(n)
            missed = leave(self._wip, missed)
            if missed == 0:
                return

    # -- introspection (tests, rstreams.debug) ----------------------------------------------------
    def state_size(self) -> tuple[int, int, int]:
        """(open windows, open accumulators, fired windows waiting for demand). Read racily."""
        w, k = self._store.size()
        return w, k, len(self._ready)

    @property
    def watermark(self) -> float:
        return cast(float, self._store.wm)


@final
class _EventTimeFlowable(Flowable[Window[Any, Any]]):
    __slots__ = ("_op", "_source", "_make_store", "_prefetch", "_late", "_scheduler", "_idle", "_interval")

    def __init__(self, op: str, source: Flowable[Any],
                 make_store: Callable[[Callable[[Any, float, float, float], None]], _Store],
                 prefetch: int, late: Any, scheduler: Scheduler | None, idle: float | None,
                 interval: float | None) -> None:
        self._op = op
        self._source = source
        self._make_store = make_store
        self._prefetch = prefetch
        self._late = late
        self._scheduler = scheduler
        self._idle = idle
        self._interval = interval

    def _subscribe_actual(self, subscriber: Subscriber[Window[Any, Any]]) -> None:
        late = self._late
        sink: Any = None
        late_fn: Callable[[Any, float, float, float], None]
        if late == "error":
            late_fn = _late_error(self._op)
        elif late == "drop":
            late_fn = _drop
        elif _is_processor(late):
            sink = _LateProcessor(late, self._op)
            late_fn = sink.on_next
        else:
            cb = cast("Callable[[Any], object]", late)

            def to_callback(x: Any, start: float, end: float, wm: float) -> None:
                cb(x)

            late_fn = to_callback

        s = self._scheduler
        worker = s.create_worker() if s is not None else None
        store = self._make_store(late_fn)
        self._source.subscribe(_EventTimeSubscriber(subscriber, store, self._prefetch, sink, worker, self._idle,
                                                        self._interval))


# ---------------------------------------------------------------------------------------------
# Assembly: argument checks and the operator


def _check_time(op: str, name: str, v: object, *, positive: bool) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{op}(): {name} must be a number of seconds (int or float), got {type(v).__name__}")
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        need = "> 0" if positive else ">= 0"
        raise ValueError(f"{op}(): {name} must be a finite number of seconds {need}, got {v!r}")
    return v


def _check_count(op: str, name: str, v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{op}(): {name} must be an int, got {type(v).__name__}")
    if v <= 0:
        raise ValueError(f"{op}(): {name} must be > 0, got {v}")
    return v


def _check_late(op: str, late: object) -> object:
    if late is None:
        return "error"
    if isinstance(late, str):
        if late not in ("error", "drop"):
            raise ValueError(f"{op}(): late must be a callable, a Processor, 'drop' or 'error', got {late!r}")
    elif not (_is_processor(late) or callable(late)):
        raise TypeError(f"{op}(): late must be a callable, a Processor, 'drop' or 'error', got {type(late).__name__}")
    return late


def _check_scheduler(op: str, scheduler: object, timers: bool) -> Scheduler | None:
    if not timers:
        if scheduler is not None:
            raise ValueError(f"{op}(): scheduler is used only with idle_timeout (the timer that advances an idle "
                             f"watermark) or early_interval (the timer of early results); pass one of them or "
                             f"drop scheduler=")
        return None
    if scheduler is None:
        from ... import schedulers

        return schedulers.computation()
    if not isinstance(scheduler, Scheduler):
        raise TypeError(f"{op}(): scheduler must be a Scheduler, got {type(scheduler).__name__}")
    return scheduler


def _with_process(flow: Flowable[Window[Any, Any]], process: Callable[[Flowable[Any]], Publisher[Any]],
                  op: str) -> Flowable[Window[Any, Any]]:
    """The general path: each window's elements as a Flowable, reduced by the user's function; every
    value it emits becomes a Window (concat_map keeps the windows in order)."""

    def per_window(w: Window[Any, Any]) -> Publisher[Window[Any, Any]]:
        out = process(Flowable.from_iterable(w.value))
        if out is None:
            raise none_result_error(op, "process")
        k, s, e = w.key, w.start, w.end
        return Flowable.from_publisher(out).map(lambda v: _window(k, s, e, v))

    return flow.concat_map(per_window)


def event_time_window(
    source: Flowable[T], op: str, *, size: float | None = None, slide: float | None = None, gap: float | None = None,
    timestamp: Callable[[T], float], key: Callable[[T], Hashable] | None = None, allowed_lateness: float = 0.0,
    late: LateSpec = None, aggregate: AggregateSpec = None, process: Callable[[Flowable[T]], Publisher[Any]] | None = None,
    idle_timeout: float | None = None, scheduler: Scheduler | None = None, prefetch: int = 1024,
    early_every: int | None = None, early_interval: float | None = None,
) -> Flowable[Window[Any, Any]]:
    """``tumbling_window`` (``size``), ``sliding_window`` (``size``, ``slide``) and
    ``session_window`` (``gap``) of the facade, named ``op`` in errors: one argument check, one
    operator."""
    if gap is not None:
        g: float | None = _check_time(op, "gap", gap, positive=True)
        sz = sl = 0.0
    else:
        g = None
        sz = _check_time(op, "size", size, positive=True)
        sl = sz if slide is None else _check_time(op, "slide", slide, positive=True)
        if sl > sz:
            raise ValueError(f"{op}(): slide ({slide}) must be <= size ({size}): elements between windows would "
                             f"belong to none (use tumbling_window for slide == size)")
    if not callable(timestamp):
        raise TypeError(f"{op}(): timestamp must be a callable returning the element's event time in seconds, "
                        f"got {type(timestamp).__name__}")
    if key is not None and not callable(key):
        raise TypeError(f"{op}(): key must be a callable or None, got {type(key).__name__}")
    lateness = _check_time(op, "allowed_lateness", allowed_lateness, positive=False)
    late_v = _check_late(op, late)
    if process is not None:
        if not callable(process):
            raise TypeError(f"{op}(): process must be a callable Flowable -> Publisher, got {type(process).__name__}")
        if aggregate is not None:
            raise ValueError(f"{op}(): pass aggregate= (folded as elements arrive) or process= (the window's "
                             f"elements as a Flowable), not both")
    idle = None if idle_timeout is None else _check_time(op, "idle_timeout", idle_timeout, positive=True)
    every = None if early_every is None else _check_count(op, "early_every", early_every)
    interval = None if early_interval is None else _check_time(op, "early_interval", early_interval, positive=True)
    early = every is not None or interval is not None
    if early and process is not None:
        raise ValueError(f"{op}(): early results (early_every=, early_interval=) need aggregate=: an accumulator has "
                         f"a value so far, while process= sees a window's elements once it is complete")
    sched = _check_scheduler(op, scheduler, idle is not None or interval is not None)
    pf = _check_count(op, "prefetch", prefetch)
    agg = _agg_spec(op, "list" if process is not None else aggregate, g is not None)
    tsf = cast("Callable[[Any], Any]", timestamp)
    keyf = cast("Callable[[Any], Any] | None", key)

    def make(late_fn: Callable[[Any, float, float, float], None]) -> _Store:
        if g is not None:
            return _SessionStore(op, tsf, keyf, lateness, agg, late_fn, every, early, g)
        return _FixedStore(op, tsf, keyf, lateness, agg, late_fn, every, early, sz, sl)

    flow = _EventTimeFlowable(op, source, make, pf, late_v, sched, idle, interval)
    if process is not None:
        return _with_process(flow, cast("Callable[[Flowable[Any]], Publisher[Any]]", process), op)
    return flow
