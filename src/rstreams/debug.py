"""Live state of a running pipeline: where a stalled chain waits.

Example::

    from rstreams import Flowable, debug, schedulers
    ts = Flowable.range(0, 1000).observe_on(schedulers.single()).name("parsed").test(0)
    print(debug.describe(ts))
    # source  RangeSubscription ...
    #   ObserveOnSubscriber demand=0 queued=128 live on LoopWorker   <- waits: no demand from below
    #   name('parsed') demand=0 emitted=0 live
    #   sink    TestSubscriber

``describe`` walks from the sink's Subscription up through each operator's upstream link (the
library's operator subscribers keep one) and reads what each keeps: outstanding demand, queued
elements, terminal state, the worker it runs on; a named stage (``Flowable.name``) adds its
counters. Reading another thread's state is a racy look: a picture for a human, not a decision.
Links the walk cannot see through (a foreign Subscription, a fused chain's single driver) end it.
"""

from __future__ import annotations

from typing import Any

from ._internal.introspect import StageState, chain_of, state_of, upstream_of

__all__ = ["describe", "stages"]


def _start(target: Any) -> tuple[Any, str | None]:
    """The Subscription to walk from, and the sink's label when ``target`` is a subscriber."""
    sub = getattr(target, "subscription", None)
    if sub is not None and not callable(sub):  # TestSubscriber and friends keep theirs
        return sub, type(target).__name__
    up = upstream_of(target)
    if up is not None and hasattr(target, "on_next"):
        return up, type(target).__name__
    return target, None


def stages(target: Any) -> list[StageState]:
    """The links of ``target``'s chain as :class:`StageState`, source first.

    Example::

        ts = Flowable.range(0, 10).hide().map(str).test(2)
        [(s.kind, s.demand, s.state) for s in debug.stages(ts)]
        # [('IterSubscription', 0, 'live'), ('MapSubscriber', None, 'live')]
    """
    start, _ = _start(target)
    return [state_of(x) for x in reversed(chain_of(start))]


def _label(s: StageState) -> str:
    meter = getattr(s.obj, "meter", None)
    stage = getattr(s.obj, "stage", None)
    if meter is not None and stage is not None and hasattr(stage, "name"):
        state = "cancelled" if meter.cancelled else "completed" if meter.completed else "failed" if meter.failed else "live"
        text = f"name({stage.name!r}) demand="
        text += "unbounded" if meter.outstanding >= 2**63 - 1 else str(meter.outstanding)
        text += f" emitted={meter.emitted} {state}"
        return text + (f" (thread {meter.thread})" if meter.thread else "")
    return s.line()


def describe(target: Any) -> str:
    """A picture of ``target``'s running chain, source first: each stage's demand, queue, state.

    ``target``: a subscriber that keeps its Subscription (``TestSubscriber``, the Disposable
    ``subscribe(callbacks)`` returns) or any operator Subscription. The stage nearest the sink that
    is live with no outstanding demand is marked ``<- waits: no demand from below``.

    Example::

        ts = Flowable.range(0, 10).hide().map(str).test(2)     # asks for 2 of the 10
        print(debug.describe(ts))
        # source  IterSubscription demand=0 live   <- waits: no demand from below
        #   MapSubscriber live
        #   sink    TestSubscriber
    """
    start, sink = _start(target)
    links = stages(target)
    lines = [_label(s) for s in links]
    for i in range(len(links) - 1, -1, -1):
        s = links[i]
        outstanding = getattr(getattr(s.obj, "meter", None), "outstanding", s.demand)
        if s.state == "live" and outstanding == 0:
            lines[i] += "   <- waits: no demand from below"
            break
    out = [("source  " if i == 0 else "  ") + line for i, line in enumerate(lines)]
    if sink is not None:
        out.append(f"  sink    {sink}")
    return "\n".join(out)
