"""The registry of marble scenarios: one per public Flowable operator, or a reason why not.

Each scenario is run on the virtual-time ``TestScheduler`` by ``marbles.py``; the recorded signals
become ``docs/marbles/<name>.svg``. ``CATEGORY`` places every public method on an operator page
(``docs/_tools/hooks.py`` builds the pages); ``tests/docs/test_marbles.py`` checks that every public
method has a scenario or a ``NO_DIAGRAM`` reason, and that each committed SVG matches its run.

Lanes: ``lane((t, value), ..., end=t)`` completes at ``t``; ``error=t`` fails with Boom at ``t``; no
``end`` never terminates. Times are relative to the moment the lane is subscribed (a lane is cold:
``concat`` subscribes the second lane when the first completes, so its marbles start there).
"""

from __future__ import annotations

from typing import Any

from marbles import Boom, Ctx, Scenario, lane

from rstreams import BackpressureOverflow, Flowable

SCENARIOS: dict[str, Scenario] = {}
CATEGORY: dict[str, str] = {}

# Public methods drawn without a diagram, and why.
NO_DIAGRAM: dict[str, str] = {
    "blocking_first": "blocks the calling thread until a value arrives; a virtual clock cannot move while it waits",
    "blocking_last": "blocks the calling thread until completion",
    "blocking_single": "blocks the calling thread until completion",
    "blocking_for_each": "blocks the calling thread until completion",
    "blocking_iterable": "an iterator that blocks the calling thread for each value",
    "blocking_subscribe": "blocks the calling thread until completion",
    "subscribe": "the terminal call itself: every diagram's output lane is what a subscriber receives",
    "test": "returns a TestSubscriber: every diagram's output lane is recorded by one",
    "to_future": "returns a concurrent.futures.Future, not a stream",
    "to_async_iterator": "an asyncio iterator; it runs on an event loop, not on virtual time",
    "to": "applies a converter to the Flowable; what comes out is whatever the converter returns",
    "send": "the coroutine protocol (await flowable); not a stream operator",
    "throw": "the coroutine protocol (await flowable); not a stream operator",
    "close": "the coroutine protocol (await flowable); not a stream operator",
    "lift": "takes a hand-written Subscriber factory: the diagram is whatever that Subscriber does",
    "map_async": "runs its coroutines on an asyncio event loop, not on the virtual-time scheduler",
    "flat_map_async": "runs its async iterables on an asyncio event loop, not on virtual time",
    "do_on_next_async": "runs its coroutines on an asyncio event loop, not on virtual time",
    "from_async_iterable": "pulls an async iterable on an asyncio event loop, not on virtual time",
    "from_coroutine": "awaits a coroutine on an asyncio event loop, not on virtual time",
    "from_future": "completes when a real future does; nothing on virtual time to record",
}


def add(category: str, name: str, build: Any, *lanes: Any, **kw: Any) -> None:
    SCENARIOS[name] = Scenario(name, build, tuple(lanes), **kw)
    CATEGORY[name] = category


ABC = lane((1, "a"), (3, "b"), (5, "c"), end=6)
NUM = lane((1, 1), (2, 2), (4, 3), (5, 4), end=7)
NUM_ERR = lane((1, 1), (3, 2), error=5)


def _src(ctx: Ctx) -> Flowable[Any]:
    return ctx.a


# ------------------------------------------------------------------------------------------- creating
add("creating", "just", lambda c: Flowable.just(1, 2, 3), label="just(1, 2, 3)")
add("creating", "range", lambda c: Flowable.range(1, 5), label="range(1, 5)", request=2, requests=((3, 2), (6, 1)),
    show_requests=True)
add("creating", "from_iterable", lambda c: Flowable.from_iterable(["a", "b", "c"]), label='from_iterable(["a", "b", "c"])',
    request=1, requests=((2, 1), (4, 1), (6, 1)), show_requests=True)
add("creating", "empty", lambda c: Flowable.empty(), label="empty()")
add("creating", "never", lambda c: Flowable.never(), label="never()")
add("creating", "error", lambda c: Flowable.error(Boom("boom")), label="error(Boom())")
add("creating", "defer", lambda c: Flowable.defer(lambda: Flowable.just("fresh")), label='defer(lambda: just("fresh"))')
add("creating", "from_callable", lambda c: Flowable.from_callable(lambda: 42), label="from_callable(lambda: 42)")
add("creating", "from_publisher", lambda c: Flowable.from_publisher(c.a), NUM, label="from_publisher(p)")
add("creating", "generate", lambda c: Flowable.generate(lambda: 0, _gen_step), label="generate(0, emit n; n+1 until 3)",
    request=1, requests=((2, 2), (5, 2)), show_requests=True)
add("creating", "create", lambda c: Flowable.create(_create_fn), label="create(emit 1, 2, 3; complete)")
add("creating", "using", lambda c: Flowable.using(lambda: "res", lambda r: Flowable.just(r, r + "!"), lambda r: None),
    label="using(res, just(res, res!), dispose)")
add("creating", "interval", lambda c: Flowable.interval(1.5, scheduler=c.scheduler), label="interval(1.5)", duration=8)
add("creating", "timer", lambda c: Flowable.timer(3, scheduler=c.scheduler), label="timer(3)")


def _gen_step(n: int, emitter: Any) -> int:
    if n < 3:
        emitter.on_next(n)
    else:
        emitter.on_complete()
    return n + 1


def _create_fn(emitter: Any) -> None:
    for i in (1, 2, 3):
        emitter.on_next(i)
    emitter.on_complete()


# ---------------------------------------------------------------------------------------- transforming
add("transforming", "map", lambda c: c.a.map(lambda x: x * 10), NUM, label="map(x -> x * 10)")
add("transforming", "map_not_none", lambda c: c.a.map_not_none(lambda x: x * 10 if x % 2 else None), NUM,
    label="map_not_none(x -> x * 10 if odd else None)")
add("transforming", "flat_map",
    lambda c: c.a.flat_map(lambda x: Flowable.interval(1, scheduler=c.scheduler).take(2).map(lambda i, x=x: f"{x}{i}")),
    lane((1, "a"), (2, "b"), (5, "c"), end=6), label="flat_map(x -> interval(1).take(2) as x0, x1)", duration=9)
add("transforming", "concat_map",
    lambda c: c.a.concat_map(lambda x: Flowable.interval(1, scheduler=c.scheduler).take(2).map(lambda i, x=x: f"{x}{i}")),
    lane((1, "a"), (2, "b"), (5, "c"), end=6), label="concat_map(x -> interval(1).take(2) as x0, x1)", duration=9)
add("transforming", "concat_map_eager",
    lambda c: c.a.concat_map_eager(lambda x: Flowable.interval(1, scheduler=c.scheduler).take(2).map(lambda i, x=x: f"{x}{i}")),
    lane((1, "a"), (2, "b"), (5, "c"), end=6), label="concat_map_eager(x -> interval(1).take(2) as x0, x1)", duration=9)
add("transforming", "switch_map",
    lambda c: c.a.switch_map(lambda x: Flowable.interval(1, scheduler=c.scheduler).take(2).map(lambda i, x=x: f"{x}{i}")),
    lane((1, "a"), (2.5, "b"), (5, "c"), end=6), label="switch_map(x -> interval(1).take(2) as x0, x1)", duration=9)
add("transforming", "flat_map_iterable", lambda c: c.a.flat_map_iterable(lambda x: [x, x]),
    lane((1, "a"), (4, "b"), end=6), label="flat_map_iterable(x -> [x, x])")
add("transforming", "scan", lambda c: c.a.scan(lambda acc, x: acc + x), NUM, label="scan((acc, x) -> acc + x)")
add("transforming", "buffer", lambda c: c.a.buffer(2), NUM, label="buffer(2)")
add("transforming", "window", lambda c: c.a.window(2).concat_map(lambda w: w.to_list()), NUM,
    label="window(2), each window shown as its list")
add("transforming", "group_by",
    lambda c: c.a.group_by(lambda x: x % 2).flat_map(lambda g: g.map(lambda v, k=g.key: f"{k}:{v}")), NUM,
    label="group_by(x % 2), each value shown as key:value")
add("transforming", "pipe", lambda c: c.a.pipe(lambda f: f.map(lambda x: x * 10), lambda f: f.filter(lambda x: x > 10)),
    NUM, label="pipe(map(x * 10), filter(x > 10))")
add("transforming", "compose", lambda c: c.a.compose(lambda f: f.map(lambda x: x + 1)), NUM,
    label="compose(f -> f.map(x + 1))")
add("transforming", "default_if_empty", lambda c: c.a.default_if_empty("z"), lane(end=4),
    label='default_if_empty("z")')
add("transforming", "switch_if_empty", lambda c: c.a.switch_if_empty(c.b), lane(end=2),
    lane((1, "x"), (2, "y"), end=3), label="switch_if_empty(other)")
add("transforming", "start_with", lambda c: c.a.start_with("s"), ABC, label='start_with("s")')
add("transforming", "to_list", lambda c: c.a.to_list(), NUM, label="to_list()")
add("transforming", "to_dict", lambda c: c.a.to_dict(lambda x: x % 2), NUM, label="to_dict(key: x % 2)")
add("transforming", "parallel",
    lambda c: c.a.parallel(2).run_on(c.scheduler).map(lambda x: x * 10).sequential(), NUM,
    label="parallel(2).run_on(s).map(x * 10).sequential()")

# ------------------------------------------------------------------------------------------ filtering
add("filtering", "filter", lambda c: c.a.filter(lambda x: x % 2 == 0), NUM, label="filter(x -> x % 2 == 0)")
add("filtering", "take", lambda c: c.a.take(2), NUM, label="take(2)")
add("filtering", "take_last", lambda c: c.a.take_last(2), NUM, label="take_last(2)")
add("filtering", "take_while", lambda c: c.a.take_while(lambda x: x < 3), NUM, label="take_while(x -> x < 3)")
add("filtering", "take_until", lambda c: c.a.take_until(c.b), NUM, lane((3, "!")), label="take_until(other)")
add("filtering", "skip", lambda c: c.a.skip(2), NUM, label="skip(2)")
add("filtering", "skip_last", lambda c: c.a.skip_last(2), NUM, label="skip_last(2)")
add("filtering", "skip_while", lambda c: c.a.skip_while(lambda x: x < 3), NUM, label="skip_while(x -> x < 3)")
add("filtering", "skip_until", lambda c: c.a.skip_until(c.b), NUM, lane((3, "!")), label="skip_until(other)")
add("filtering", "distinct", lambda c: c.a.distinct(), lane((1, 1), (2, 2), (3, 1), (4, 3), (5, 2), end=6),
    label="distinct()")
add("filtering", "distinct_until_changed", lambda c: c.a.distinct_until_changed(),
    lane((1, 1), (2, 1), (3, 2), (4, 2), (5, 1), end=6), label="distinct_until_changed()")
add("filtering", "element_at", lambda c: c.a.element_at(2), NUM, label="element_at(2)")
add("filtering", "element_at_or_error", lambda c: c.a.element_at_or_error(5), NUM, label="element_at_or_error(5)")
add("filtering", "first", lambda c: c.a.first(), NUM, label="first()")
add("filtering", "first_element", lambda c: c.a.first_element(), lane(end=3), label="first_element() (empty: completes empty)")
add("filtering", "last", lambda c: c.a.last(), NUM, label="last()")
add("filtering", "ignore_elements", lambda c: c.a.ignore_elements(), NUM, label="ignore_elements()")

# ------------------------------------------------------------------------------------------ combining
add("combining", "merge", lambda c: Flowable.merge(c.a, c.b), lane((1, 1), (4, 3), end=6), lane((2, "a"), (3, "b"), end=5),
    label="merge(a, b)")
add("combining", "merge_with", lambda c: c.a.merge_with(c.b), lane((1, 1), (4, 3), end=6),
    lane((2, "a"), (3, "b"), end=5), label="a.merge_with(b)")
add("combining", "concat", lambda c: Flowable.concat(c.a, c.b), lane((1, 1), (2, 2), end=3),
    lane((1, "a"), (2, "b"), end=3), label="concat(a, b): b is subscribed when a completes")
add("combining", "concat_with", lambda c: c.a.concat_with(c.b), lane((1, 1), (2, 2), end=3),
    lane((1, "a"), (2, "b"), end=3), label="a.concat_with(b)")
add("combining", "zip", lambda c: Flowable.zip(c.a, c.b), lane((1, 1), (2, 2), (3, 3), end=7),
    lane((2, "a"), (4, "b"), (6, "c"), end=7), label="zip(a, b)")
add("combining", "zip_with", lambda c: c.a.zip_with(c.b, lambda x, y: f"{x}{y}"), lane((1, 1), (2, 2), (3, 3), end=7),
    lane((2, "a"), (4, "b"), (6, "c"), end=7), label="a.zip_with(b, (x, y) -> x + y)")
add("combining", "combine_latest", lambda c: Flowable.combine_latest(c.a, c.b), lane((1, 1), (3, 2), (5, 3), end=7),
    lane((2, "a"), (4, "b"), end=6), label="combine_latest(a, b)")
add("combining", "with_latest_from", lambda c: c.a.with_latest_from(c.b), lane((1, 1), (3, 2), (5, 3), end=7),
    lane((2, "a"), (4, "b"), end=6), label="a.with_latest_from(b)")
add("combining", "amb", lambda c: Flowable.amb(c.a, c.b), lane((3, 1), (4, 2), end=6), lane((2, "a"), (5, "b"), end=7),
    label="amb(a, b): the first to signal wins")
add("combining", "amb_with", lambda c: c.a.amb_with(c.b), lane((3, 1), (4, 2), end=6), lane((2, "a"), (5, "b"), end=7),
    label="a.amb_with(b)")

# ----------------------------------------------------------------------------------------- aggregates
add("aggregates", "reduce", lambda c: c.a.reduce(lambda acc, x: acc + x), NUM, label="reduce((acc, x) -> acc + x)")
add("aggregates", "collect", lambda c: c.a.collect(list, lambda acc, x: acc.append(x)), NUM,
    label="collect(list, append)")
add("aggregates", "count", lambda c: c.a.count(), NUM, label="count()")
add("aggregates", "all", lambda c: c.a.all(lambda x: x < 3), NUM, label="all(x -> x < 3)")
add("aggregates", "any", lambda c: c.a.any(lambda x: x > 2), NUM, label="any(x -> x > 2)")
add("aggregates", "contains", lambda c: c.a.contains(2), NUM, label="contains(2)")

# --------------------------------------------------------------------------------------------- errors
add("errors", "on_error_return_item", lambda c: c.a.on_error_return_item(0), NUM_ERR, label="on_error_return_item(0)")
add("errors", "on_error_return", lambda c: c.a.on_error_return(lambda e: -1), NUM_ERR, label="on_error_return(e -> -1)")
add("errors", "on_error_resume_next", lambda c: c.a.on_error_resume_next(c.b), NUM_ERR,
    lane((1, "x"), (2, "y"), end=3), label="on_error_resume_next(fallback)")
add("errors", "on_error_complete", lambda c: c.a.on_error_complete(), NUM_ERR, label="on_error_complete()")
add("errors", "retry", lambda c: c.a.retry(1), lane((1, 1), (2, 2), error=3), label="retry(1): resubscribes once",
    duration=8)
add("errors", "retry_when",
    lambda c: c.a.retry_when(lambda errors: errors.flat_map(lambda e: Flowable.timer(1, scheduler=c.scheduler))),
    lane((1, 1), error=2), label="retry_when(errors -> timer(1) each): resubscribe 1 s after each error", duration=8)
add("errors", "retry_policy", lambda c: c.a.retry_policy(_retry_max_1()), lane((1, 1), (2, 2), error=3),
    label="retry_policy(Retry.max(1))", duration=8)
add("errors", "repeat", lambda c: c.a.repeat(2), lane((1, "a"), end=2), label="repeat(2)", duration=6)
add("errors", "repeat_when",
    lambda c: c.a.repeat_when(lambda done: done.flat_map(lambda _: Flowable.timer(1, scheduler=c.scheduler))),
    lane((1, "a"), end=2), label="repeat_when(done -> timer(1) each): again 1 s after each completion", duration=8)


def _retry_max_1() -> Any:
    from rstreams.retry import Retry

    return Retry.max(1)


# ----------------------------------------------------------------------------------------------- time
add("time", "delay", lambda c: c.a.delay(1.5, scheduler=c.scheduler), ABC, label="delay(1.5)", duration=9)
add("time", "delay_subscription", lambda c: c.a.delay_subscription(2, scheduler=c.scheduler), ABC,
    label="delay_subscription(2)", duration=9)
add("time", "debounce", lambda c: c.a.debounce(1.5, scheduler=c.scheduler),
    lane((1, "a"), (2, "b"), (4, "c"), (4.5, "d"), end=7.5), label="debounce(1.5)", duration=9)
add("time", "sample", lambda c: c.a.sample(2, scheduler=c.scheduler),
    lane((1, "a"), (1.5, "b"), (3, "c"), (5.5, "d"), end=7), label="sample(2)", duration=9)
add("time", "throttle_first", lambda c: c.a.throttle_first(2, scheduler=c.scheduler),
    lane((1, "a"), (1.5, "b"), (3.5, "c"), (4, "d"), end=7), label="throttle_first(2)", duration=9)
add("time", "throttle_last", lambda c: c.a.throttle_last(2, scheduler=c.scheduler),
    lane((1, "a"), (1.5, "b"), (3, "c"), (5.5, "d"), end=7), label="throttle_last(2)", duration=9)
add("time", "throttle_latest", lambda c: c.a.throttle_latest(2, scheduler=c.scheduler),
    lane((1, "a"), (1.5, "b"), (2, "c"), (5.5, "d"), end=7), label="throttle_latest(2)", duration=9)
add("time", "timeout", lambda c: c.a.timeout(2, scheduler=c.scheduler), lane((1, "a"), (2, "b"), (5, "c"), end=6),
    label="timeout(2)", duration=8)
add("time", "timeout_selector",
    lambda c: c.a.timeout_selector(None, lambda x: Flowable.timer(2, scheduler=c.scheduler)),
    lane((1, "a"), (2, "b"), (5, "c"), end=6), label="timeout_selector(None, x -> timer(2))", duration=8)
add("time", "timestamp", lambda c: c.a.timestamp(scheduler=c.scheduler), ABC, label="timestamp(): value@time")
add("time", "time_interval", lambda c: c.a.time_interval(scheduler=c.scheduler), ABC,
    label="time_interval(): value@time since the previous")
add("time", "take_for", lambda c: c.a.take_for(3.5, scheduler=c.scheduler), NUM, label="take_for(3.5)")
add("time", "skip_for", lambda c: c.a.skip_for(3.5, scheduler=c.scheduler), NUM, label="skip_for(3.5)")
add("time", "buffer_timed", lambda c: c.a.buffer_timed(3, scheduler=c.scheduler),
    lane((1, 1), (2, 2), (4, 3), (5, 4), end=7.5), label="buffer_timed(3)", duration=9)
add("time", "window_timed", lambda c: c.a.window_timed(3, scheduler=c.scheduler).concat_map(lambda w: w.to_list()),
    lane((1, 1), (2, 2), (4, 3), (5, 4), end=7.5), label="window_timed(3), each window shown as its list", duration=9)

# --------------------------------------------------------------------------------------- backpressure
_FAST = lane((1, 1), (1.5, 2), (2, 3), (2.5, 4), (3, 5), end=7)
add("backpressure", "on_backpressure_buffer", lambda c: c.a.on_backpressure_buffer(), _FAST,
    label="on_backpressure_buffer()", request=1, requests=((4, 2), (6, 2)), show_requests=True)
add("backpressure", "on_backpressure_drop", lambda c: c.a.on_backpressure_drop(), _FAST,
    label="on_backpressure_drop()", request=1, requests=((2.2, 1), (4, 2)), show_requests=True)
add("backpressure", "on_backpressure_latest", lambda c: c.a.on_backpressure_latest(), _FAST,
    label="on_backpressure_latest()", request=1, requests=((4, 1), (6, 1)), show_requests=True)
add("backpressure", "rebatch_requests", lambda c: c.a.rebatch_requests(2), NUM,
    label="rebatch_requests(2): upstream is asked 2 at a time", request=5, show_requests=True)

# --------------------------------------------------------------------------------------- boundaries
add("boundaries", "observe_on", lambda c: c.a.observe_on(c.scheduler), NUM, label="observe_on(scheduler)")
add("boundaries", "subscribe_on", lambda c: c.a.subscribe_on(c.scheduler), NUM, label="subscribe_on(scheduler)")
add("boundaries", "hide", lambda c: c.a.hide(), NUM, label="hide()")

# ------------------------------------------------------------------------------------------ multicast
add("multicast", "publish", lambda c: c.a.publish().auto_connect(), NUM, label="publish().auto_connect()",
    second_at=3)
add("multicast", "replay", lambda c: c.a.replay(2).auto_connect(), NUM, label="replay(2).auto_connect()",
    second_at=3)
add("multicast", "share", lambda c: c.a.share(), NUM, label="share()", second_at=3)
add("multicast", "cache", lambda c: c.a.cache(), NUM, label="cache()", second_at=3)

# ------------------------------------------------------------------------------- side effects, debugging
for _name in ("do_on_next", "do_on_error", "do_on_request", "do_on_subscribe"):
    add("side-effects", _name, lambda c, n=_name: getattr(c.a, n)(lambda *_: None), NUM,
        label=f"{_name}(fn): signals pass unchanged", request=2, requests=((3, 2),), show_requests=True)
for _name in ("do_on_complete", "do_on_terminate", "do_after_terminate", "do_finally", "do_on_cancel"):
    add("side-effects", _name, lambda c, n=_name: getattr(c.a, n)(lambda: None), NUM,
        label=f"{_name}(fn): signals pass unchanged")
add("side-effects", "do_on_each", lambda c: c.a.do_on_each(lambda x: None), NUM, label="do_on_each(fn)")
add("side-effects", "log", lambda c: c.a.log("marbles"), NUM, label='log("marbles"): signals pass unchanged')
add("side-effects", "checkpoint", lambda c: c.a.checkpoint("here"), NUM_ERR,
    label='checkpoint("here"): notes the error, passes it on')
add("side-effects", "name", lambda c: c.a.name("orders"), NUM, label='name("orders"): counted in metrics')
add("side-effects", "tag", lambda c: c.a.tag("region", "eu"), NUM, label='tag("region", "eu")')

# ------------------------------------------------------------------ aggregates, combining, boundaries
add("aggregates", "sum", lambda c: c.a.sum(), NUM, label="sum()")
add("aggregates", "average", lambda c: c.a.average(), NUM, label="average()")
add("aggregates", "min", lambda c: c.a.min(), lane((1, 3), (2, 1), (4, 2), end=6), label="min()")
add("aggregates", "max", lambda c: c.a.max(), lane((1, 3), (2, 1), (4, 2), end=6), label="max()")
add("aggregates", "to_set", lambda c: c.a.to_set(), lane((1, 1), (2, 2), (4, 1), end=6), label="to_set()")
add("aggregates", "to_sorted_list", lambda c: c.a.to_sorted_list(), lane((1, 3), (2, 1), (4, 2), end=6),
    label="to_sorted_list()")
add("aggregates", "sorted", lambda c: c.a.sorted(), lane((1, 3), (2, 1), (4, 2), end=6), label="sorted()")
add("aggregates", "to_multimap", lambda c: c.a.to_multimap(len), lane((1, "a"), (2, "bb"), (4, "c"), end=6),
    label="to_multimap(len)")
add("aggregates", "sequence_equal", lambda c: Flowable.sequence_equal(c.a, c.b), lane((1, 1), (2, 2), end=5),
    lane((2, 1), (3, 2), end=4), label="sequence_equal(a, b)")
add("filtering", "single", lambda c: c.a.single(0), lane((2, 7), end=4), label="single(0)")
add("filtering", "single_or_error", lambda c: c.a.single_or_error(), lane((1, 1), (3, 2), end=5),
    label="single_or_error(): a second element is an error")
add("filtering", "first_or_error", lambda c: c.a.first_or_error(), lane(end=3),
    label="first_or_error() (empty: NoSuchElementError)")
add("filtering", "last_or_error", lambda c: c.a.last_or_error(), NUM, label="last_or_error()")
add("transforming", "pairwise", lambda c: c.a.pairwise(), NUM, label="pairwise()")
add("transforming", "zip_with_index", lambda c: c.a.zip_with_index(), ABC, label="zip_with_index()")
add("transforming", "enumerate", lambda c: c.a.enumerate(1), ABC, label="enumerate(1)")
add("transforming", "end_with", lambda c: c.a.end_with("e"), ABC, label='end_with("e")')
add("transforming", "materialize", lambda c: c.a.materialize().map(_note), NUM_ERR,
    label="materialize(), each Notification shown by its kind")
add("transforming", "dematerialize", lambda c: c.a.materialize().dematerialize(), NUM_ERR,
    label="materialize().dematerialize()")
add("transforming", "buffer_until", lambda c: c.a.buffer_until(lambda x: x == 0),
    lane((1, 1), (2, 2), (3, 0), (4, 3), (5, 0), end=6), label="buffer_until(x -> x == 0)")
add("transforming", "buffer_while", lambda c: c.a.buffer_while(lambda x: x != 0),
    lane((1, 1), (2, 2), (3, 0), (4, 3), end=6), label="buffer_while(x -> x != 0)")
add("transforming", "window_until",
    lambda c: c.a.window_until(lambda x: x == 0).concat_map(lambda w: w.to_list()),
    lane((1, 1), (2, 2), (3, 0), (4, 3), end=6), label="window_until(x -> x == 0), each window as its list")
add("transforming", "window_while",
    lambda c: c.a.window_while(lambda x: x != 0).concat_map(lambda w: w.to_list()),
    lane((1, 1), (2, 2), (3, 0), (4, 3), end=6), label="window_while(x -> x != 0), each window as its list")
add("transforming", "concat_map_delay_error",
    lambda c: c.a.concat_map_delay_error(lambda x: Flowable.error(Boom()) if x == 2 else Flowable.just(x * 10)),
    NUM, label="concat_map_delay_error(x -> error if x == 2 else just(x * 10))")
add("transforming", "switch_map_delay_error",
    lambda c: c.a.switch_map_delay_error(lambda x: Flowable.error(Boom()) if x == 2 else Flowable.just(x * 10)),
    NUM, label="switch_map_delay_error(x -> error if x == 2 else just(x * 10))")
add("combining", "concat_eager", lambda c: Flowable.concat_eager(c.a, c.b), lane((1, 1), (3, 2), end=4),
    lane((1, "a"), (2, "b"), end=3), label="concat_eager(a, b): both subscribed at once, emitted in order")
add("combining", "merge_delay_error", lambda c: Flowable.merge_delay_error(c.a, c.b), lane((1, 1), error=2),
    lane((1.5, "a"), (3, "b"), end=4), label="merge_delay_error(a, b)")
add("combining", "switch_on_next",
    lambda c: Flowable.switch_on_next(c.a.map(lambda x: Flowable.interval(1, scheduler=c.scheduler).take(2).map(
        lambda i, x=x: f"{x}{i}"))),
    lane((1, "a"), (2.5, "b"), (5, "c"), end=6), label="switch_on_next(a Flowable per x: x0, x1 a second apart)",
    duration=9)

# ---------------------------------------------------------------------------- event-time windows
_EVENTS = lane((1, ("a", 1.0)), (2, ("b", 2.0)), (3, ("a", 4.0)), (4, ("a", 12.0)), (5, ("a", 25.0)), end=6,
               label="(key, t)")
add("windows", "tumbling_window",
    lambda c: c.a.tumbling_window(10, timestamp=lambda e: e[1], aggregate="count").map(lambda w: (w.start, w.value)),
    _EVENTS, label="tumbling_window(10, timestamp=t, aggregate=count): (start, count)")
add("windows", "sliding_window",
    lambda c: c.a.sliding_window(10, 5, timestamp=lambda e: e[1], aggregate="count").map(lambda w: (w.start, w.value)),
    _EVENTS, label="sliding_window(10, 5, timestamp=t, aggregate=count): (start, count)")
add("windows", "session_window",
    lambda c: c.a.session_window(5, timestamp=lambda e: e[1], key=lambda e: e[0], aggregate="count").map(
        lambda w: (w.key, w.start, w.value)),
    _EVENTS, label="session_window(5, timestamp=t, key, aggregate=count): (key, start, count)")


def _note(n: Any) -> str:
    kind = getattr(n, "kind", None)
    text = str(getattr(kind, "name", kind) or type(n).__name__).lower()
    return {"on_next": "N", "next": "N", "on_error": "E", "error": "E", "on_complete": "C", "complete": "C"}.get(
        text, text[:1].upper())


NO_DIAGRAM.update({
    "blocking_latest": "an iterator that blocks the calling thread; a virtual clock cannot move while it waits",
    "blocking_next": "an iterator that blocks the calling thread; a virtual clock cannot move while it waits",
    "blocking_most_recent": "an iterator polled by the calling thread; it has no timeline of its own",
    "from_arrow": "a whole pyarrow object's rows, emitted on demand: the timing is from_iterable's",
    "from_pandas": "a whole DataFrame's rows, emitted on demand: the timing is from_iterable's",
    "to_arrow_batches": "pyarrow batches of batch_size rows: the timing is buffer's",
    "to_pandas": "one DataFrame at completion: the timing is to_list's",
    "from_observable": "bridges a reactivex Observable (no demand); the strategies are drawn under Backpressure",
    "to_observable": "returns a reactivex Observable, not a Flowable",
})
for _n in ("blocking_latest", "blocking_next", "blocking_most_recent", "to_observable"):
    CATEGORY[_n] = "consuming"
for _n in ("from_arrow", "from_pandas", "from_observable"):
    CATEGORY[_n] = "creating"
for _n in ("to_arrow_batches", "to_pandas"):
    CATEGORY[_n] = "aggregates"

# --------------------------------------------------------------- operators whose page category is fixed
# (the methods without a diagram still need a page)
for _n in ("blocking_first", "blocking_last", "blocking_single", "blocking_for_each", "blocking_iterable",
           "blocking_subscribe", "subscribe", "test", "to_future", "to", "lift"):
    CATEGORY[_n] = "consuming"
for _n in ("to_async_iterator", "send", "throw", "close", "map_async", "flat_map_async", "do_on_next_async",
           "from_async_iterable", "from_coroutine"):
    CATEGORY[_n] = "asyncio"
CATEGORY["from_future"] = "creating"

# on_backpressure_buffer with a bound: the overflow strategy decides
add("backpressure", "on_backpressure_buffer_bounded",
    lambda c: c.a.on_backpressure_buffer(2, on_overflow=BackpressureOverflow.DROP_OLDEST), _FAST,
    label="on_backpressure_buffer(2, on_overflow=DROP_OLDEST)", request=1, requests=((4, 3),), show_requests=True)
CATEGORY.pop("on_backpressure_buffer_bounded")
EXTRA_DIAGRAMS = {"on_backpressure_buffer": ["on_backpressure_buffer_bounded"]}  # more diagrams on a method's entry
