"""Marble diagrams generated from real runs, not drawn.

Each scenario (``marble_scenarios.py``) builds an operator over timed source lanes on the virtual-time
``rstreams.testing.TestScheduler`` and subscribes a recording ``TestSubscriber``. Every signal is
recorded with its virtual timestamp: what each source lane actually emitted to the operator (and the
operator's ``request(n)`` calls upstream), and what came out (``on_next``, ``on_error``,
``on_complete``, the subscriber's own ``request(n)`` and ``cancel``). The recording is rendered as an
SVG: source lane(s), the operator box, the output lane, an X for an error, a bar for completion.

    python docs/_tools/marbles.py            # regenerate docs/marbles/*.svg
    python docs/_tools/marbles.py --check    # exit 1 if a committed SVG differs from its run
    python docs/_tools/marbles.py map zip    # only these

The SVG is a pure function of the recording (fixed layout, no floats with long reprs, no dates), so a
re-run reproduces it byte for byte; ``tests/docs/test_marbles.py`` fails when a committed diagram no
longer matches its recorded run.
"""

from __future__ import annotations

import html
import os
import sys
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rstreams import MAX_DEMAND, Flowable
from rstreams.testing import TestScheduler, TestSubscriber

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(ROOT, "docs", "marbles")


class Boom(Exception):
    """The error the scenarios' lanes and functions raise (drawn as an X)."""

    def __repr__(self) -> str:
        return "Boom()"


COMPLETE = "complete"


@dataclass(frozen=True)
class Lane:
    """A source: ``events`` are (time, value) pairs, relative to the moment it is subscribed;
    ``end`` is (time, COMPLETE) or (time, an exception); ``end=None`` never terminates."""

    events: tuple[tuple[float, Any], ...]
    end: tuple[float, Any] | None = None
    label: str = ""


def lane(*events: tuple[float, Any], end: float | None = None, error: float | None = None, label: str = "") -> Lane:
    """``lane((1, "a"), (3, "b"), end=4)``; ``error=t`` ends it with Boom at ``t``."""
    term: tuple[float, Any] | None = None
    if error is not None:
        term = (error, Boom("boom"))
    elif end is not None:
        term = (end, COMPLETE)
    return Lane(tuple(events), term, label)


@dataclass(frozen=True)
class Scenario:
    """One operator's diagram: ``build(ctx)`` returns the Flowable to subscribe."""

    name: str
    build: Callable[[Ctx], Any]
    lanes: tuple[Lane, ...] = ()
    label: str = ""  # the operator box's text; default: the name
    request: int = MAX_DEMAND  # the subscriber's initial request
    requests: tuple[tuple[float, int], ...] = ()  # (time, n): later requests by the subscriber
    cancel_at: float | None = None
    duration: float = 8.0  # the drawn time span (the clock is advanced to it)
    show_requests: bool = False  # draw request(n) annotations (when backpressure is the point)
    second_at: float | None = None  # a second subscriber subscribes then (multicast), drawn on its own lane
    # the drawn output lane: "values" or "inner" (a Flowable of Flowables: its inner streams are drawn)


@dataclass
class Recording:
    """Signals with virtual timestamps, per lane (sources) and for the output."""

    sources: list[list[tuple[float, str, str]]] = field(default_factory=list)  # (t, kind, text)
    output: list[tuple[float, str, str]] = field(default_factory=list)
    second: list[tuple[float, str, str]] = field(default_factory=list)  # the second subscriber's, if any


class Ctx:
    """What a scenario's ``build`` gets: the timed source lanes and the virtual-time scheduler."""

    def __init__(self, scheduler: TestScheduler, sources: list[Flowable[Any]]) -> None:
        self.scheduler = scheduler
        self.sources = sources

    @property
    def a(self) -> Flowable[Any]:
        return self.sources[0]

    @property
    def b(self) -> Flowable[Any]:
        return self.sources[1]

    @property
    def c(self) -> Flowable[Any]:
        return self.sources[2]


def show(value: Any) -> str:
    """A value's text in a marble (short, deterministic)."""
    if isinstance(value, BaseException):
        return "X"
    if isinstance(value, Flowable):
        return "F"
    if isinstance(value, bool):
        return "T" if value else "F"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple) and hasattr(value, "value") and hasattr(value, "time"):  # Timed
        return f"{show(value.value)}@{value.time:g}"
    if isinstance(value, (list, tuple)):
        inner = ",".join(show(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(show(v) for v in value)) + "}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{show(k)}:{show(v)}" for k, v in value.items()) + "}"
    key = getattr(value, "key", None)
    if key is not None and type(value).__name__.startswith("Grouped"):
        return f"g{show(key)}"
    return str(value)


def _timed_lane(spec: Lane, sch: TestScheduler, rec: list[tuple[float, str, str]]) -> Flowable[Any]:
    parts: list[Flowable[Any]] = [
        Flowable.timer(t, scheduler=sch).map(lambda _, v=v: v) for t, v in spec.events
    ]
    if spec.end is None:
        parts.append(Flowable.never())
    elif spec.end[1] == COMPLETE:
        parts.append(Flowable.timer(spec.end[0], scheduler=sch).ignore_elements())
    else:
        err = spec.end[1]
        parts.append(Flowable.timer(spec.end[0], scheduler=sch).flat_map(lambda _, e=err: Flowable.error(e)))
    return (
        Flowable.merge(*parts)
        .on_backpressure_buffer()  # a lane keeps its timing; a slow operator sees it queued
        .do_on_next(lambda v: rec.append((sch.now(), "next", show(v))))
        .do_on_error(lambda e: rec.append((sch.now(), "error", "X")))
        .do_on_complete(lambda: rec.append((sch.now(), "complete", "")))
        .do_on_request(lambda n: rec.append((sch.now(), "request", _n(n))))
        .do_on_cancel(lambda: rec.append((sch.now(), "cancel", "")))
    )


def _n(n: int) -> str:
    return "∞" if n >= MAX_DEMAND else str(n)


class _Recorder(TestSubscriber[Any]):
    __test__ = False

    def __init__(self, sch: TestScheduler, rec: list[tuple[float, str, str]], initial: int, at: float = 0.0) -> None:
        super().__init__(initial_request=initial)
        self._sch = sch
        self._rec = rec
        if at:
            rec.append((at, "subscribe", ""))
        if initial:
            rec.append((at, "request", _n(initial)))

    def on_next(self, item: Any) -> None:
        self._rec.append((self._sch.now(), "next", show(item)))
        super().on_next(item)

    def on_error(self, error: BaseException) -> None:
        self._rec.append((self._sch.now(), "error", "X"))
        super().on_error(error)

    def on_complete(self) -> None:
        self._rec.append((self._sch.now(), "complete", ""))
        super().on_complete()


def record(sc: Scenario) -> Recording:
    """Run ``sc`` on a fresh TestScheduler and return its signals with virtual timestamps."""
    sch = TestScheduler()
    rec = Recording(sources=[[] for _ in sc.lanes])
    sources = [_timed_lane(spec, sch, rec.sources[i]) for i, spec in enumerate(sc.lanes)]
    flowable = sc.build(Ctx(sch, sources))
    ts = _Recorder(sch, rec.output, sc.request)
    flowable.subscribe(ts)
    for t, n in sc.requests:
        sch.create_worker().schedule(lambda n=n: (rec.output.append((sch.now(), "request", _n(n))), ts.request(n)), delay=t)
    second: list[_Recorder] = []
    if sc.second_at is not None:
        def subscribe_second() -> None:
            ts2 = _Recorder(sch, rec.second, MAX_DEMAND, at=sch.now())
            second.append(ts2)
            flowable.subscribe(ts2)

        sch.create_worker().schedule(subscribe_second, delay=sc.second_at)
    if sc.cancel_at is not None:
        sch.create_worker().schedule(lambda: (rec.output.append((sch.now(), "cancel", "")), ts.cancel()), delay=sc.cancel_at)
    sch.advance_to(sc.duration)
    ts.assert_no_violations()
    for ts2 in second:
        ts2.assert_no_violations()
    return rec


# ---------------------------------------------------------------------------------------------------
# SVG

_W = 680  # drawing width
_X0 = 40  # time 0
_X1 = 620  # time = duration
_LANE_H = 56
_BOX_H = 44
_R = 15  # marble radius
_PALETTE = ("#f4c20d", "#3cba54", "#4885ed", "#db3236", "#9c27b0", "#ff8a00", "#00a3a3", "#8d6e63")


def _colour(text: str) -> str:
    return _PALETTE[zlib.crc32(text.encode()) % len(_PALETTE)]


def _marble_w(text: str) -> int:
    return max(2 * _R, 9 * len(text) + 12)


def _fmt(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


class _Svg:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.right = 0.0  # the rightmost drawn x: a crowded lane widens the picture rather than leave it

    def add(self, s: str) -> None:
        self.parts.append(s)


def _lane(svg: _Svg, y: float, events: Sequence[tuple[float, str, str]], duration: float, show_requests: bool,
          label: str, requests_above: bool) -> None:
    scale = (_X1 - _X0) / duration
    end_x = _X1 + 30
    terminal = [e for e in events if e[1] in ("complete", "error", "cancel")]
    line_end = _X0 + terminal[-1][0] * scale if terminal else end_x  # a resubscribed lane runs to its last end
    start = [e for e in events if e[1] == "subscribe"]
    line_start = _X0 + start[0][0] * scale if start else _X0 - 20  # a late subscriber's lane starts then
    svg.add(f'<line x1="{_fmt(line_start)}" y1="{_fmt(y)}" x2="{_fmt(max(line_end, _X0 - 10))}" y2="{_fmt(y)}" class="axis"/>')
    if not terminal:
        svg.add(f'<path d="M{end_x - 8},{_fmt(y - 6)} L{end_x},{_fmt(y)} L{end_x - 8},{_fmt(y + 6)}" class="arrow"/>')
    if label:
        svg.add(f'<text x="{_X0 - 20}" y="{_fmt(y - 20)}" class="lanelabel">{html.escape(label)}</text>')
    next_free = -1e9
    req_free = -1e9
    for t, kind, text in events:
        x = _X0 + t * scale
        if kind == "next":
            w = _marble_w(text)
            cx = max(x, next_free + w / 2 + 2)
            next_free = cx + w / 2
            svg.right = max(svg.right, next_free)
            if w == 2 * _R:
                svg.add(f'<circle cx="{_fmt(cx)}" cy="{_fmt(y)}" r="{_R}" fill="{_colour(text)}" class="marble"/>')
            else:
                svg.add(f'<rect x="{_fmt(cx - w / 2)}" y="{_fmt(y - _R)}" width="{w}" height="{2 * _R}" rx="{_R}" '
                        f'fill="{_colour(text)}" class="marble"/>')
            svg.add(f'<text x="{_fmt(cx)}" y="{_fmt(y + 5)}" class="value">{html.escape(text)}</text>')
        elif kind == "complete":
            cx = max(x, next_free + 6)
            svg.add(f'<line x1="{_fmt(cx)}" y1="{_fmt(y - 16)}" x2="{_fmt(cx)}" y2="{_fmt(y + 16)}" class="complete"/>')
        elif kind == "error":
            cx = max(x, next_free + 12)
            svg.add(f'<path d="M{_fmt(cx - 10)},{_fmt(y - 10)} L{_fmt(cx + 10)},{_fmt(y + 10)} M{_fmt(cx - 10)},'
                    f'{_fmt(y + 10)} L{_fmt(cx + 10)},{_fmt(y - 10)}" class="error"/>')
        elif kind == "cancel":
            cx = max(x, next_free + 6)
            svg.add(f'<text x="{_fmt(cx)}" y="{_fmt(y + 5)}" class="cancel">✂ cancel</text>')
        elif kind == "subscribe":
            svg.add(f'<path d="M{_fmt(x)},{_fmt(y - 12)} L{_fmt(x)},{_fmt(y + 12)}" class="sub"/>')
        elif kind == "request" and show_requests:
            ty = y - 22 if requests_above else y + 30
            tx = max(x, req_free + 2)
            label_text = f"request({text})"
            req_free = tx + 7 * len(label_text)
            svg.right = max(svg.right, req_free)
            svg.add(f'<text x="{_fmt(tx)}" y="{_fmt(ty)}" class="request">{html.escape(label_text)}</text>')


def render(sc: Scenario, rec: Recording) -> str:
    """The SVG of one recording."""
    n_src = len(rec.sources)
    top = 34 if sc.show_requests else 14
    height = top + n_src * _LANE_H + _BOX_H + 24 + _LANE_H + (26 if sc.show_requests else 0)
    if sc.second_at is not None:
        height += _LANE_H
    svg = _Svg()
    svg.add(f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {height}" width="{_W}" height="{height}" '
            f'role="img" aria-label="marble diagram of {html.escape(sc.name)}">')
    svg.add(f"<title>{html.escape(sc.name)}: marble diagram recorded on the virtual-time TestScheduler</title>")
    svg.add("<style>"
            ".axis{stroke:#555;stroke-width:2}.arrow{fill:none;stroke:#555;stroke-width:2}"
            ".marble{stroke:#333;stroke-width:1.5}.value{font:bold 13px sans-serif;text-anchor:middle;fill:#111}"
            ".complete{stroke:#333;stroke-width:3}.error{stroke:#c62828;stroke-width:3.5;fill:none}"
            ".box{fill:#eef1fb;stroke:#3f51b5;stroke-width:1.5}.op{font:14px monospace;text-anchor:middle;fill:#1a237e}"
            ".request{font:11px monospace;fill:#6a1b9a}.cancel{font:12px sans-serif;fill:#c62828}"
            ".lanelabel{font:11px sans-serif;fill:#555}.sub{stroke:#555;stroke-width:2}"
            "</style>")
    svg.add(f'<rect width="{_W}" height="{height}" fill="#fff"/>')
    y = top + _LANE_H / 2
    for i, events in enumerate(rec.sources):
        label = sc.lanes[i].label
        _lane(svg, y, events, sc.duration, sc.show_requests, label, requests_above=True)
        y += _LANE_H
    box_y = y - _LANE_H / 2 + 8 if n_src else top
    svg.add(f'<rect x="{_X0 - 20}" y="{_fmt(box_y)}" width="{_X1 - _X0 + 50}" height="{_BOX_H}" rx="6" class="box"/>')
    svg.add(f'<text x="{_fmt((_X0 + _X1) / 2)}" y="{_fmt(box_y + _BOX_H / 2 + 5)}" class="op">{html.escape(sc.label or sc.name)}</text>')
    out_y = box_y + _BOX_H + 24 + _LANE_H / 2 - 6
    _lane(svg, out_y, rec.output, sc.duration, sc.show_requests, "", requests_above=False)
    if sc.second_at is not None:
        _lane(svg, out_y + _LANE_H, rec.second, sc.duration, sc.show_requests,
              f"a second subscriber, from t={sc.second_at:g}", requests_above=False)
    svg.add("</svg>")
    width = max(_W, int(svg.right) + 16)
    if width != _W:
        svg.parts[0] = svg.parts[0].replace(f'viewBox="0 0 {_W} ', f'viewBox="0 0 {width} ').replace(
            f'width="{_W}"', f'width="{width}"')
        svg.parts[3] = svg.parts[3].replace(f'width="{_W}"', f'width="{width}"')
    return "\n".join(svg.parts) + "\n"


def generate(name: str) -> str:
    from marble_scenarios import SCENARIOS

    sc = SCENARIOS[name]
    return render(sc, record(sc))


def svg_path(name: str) -> str:
    return os.path.join(OUT_DIR, f"{name}.svg")


def main(argv: Sequence[str]) -> int:
    sys.path.insert(0, HERE)
    from marble_scenarios import SCENARIOS

    check = "--check" in argv
    names = [a for a in argv if not a.startswith("--")] or sorted(SCENARIOS)
    os.makedirs(OUT_DIR, exist_ok=True)
    stale = []
    for name in names:
        text = generate(name)
        path = svg_path(name)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:
            stale.append(name)
            if not check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    if check and stale:
        print(f"stale marble diagrams (run python docs/_tools/marbles.py): {stale}")
        return 1
    print(f"{len(names)} diagrams, {len(stale)} {'stale' if check else 'written'}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    sys.exit(main(sys.argv[1:]))
