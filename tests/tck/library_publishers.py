"""Every publisher the library ships, as a TCK factory: ``make(n)`` emits exactly ``n`` elements.

One line each. ``tests/tck/test_tck_library.py`` runs the Publisher verification over every entry,
and ``tests/meta/test_tck_coverage.py`` fails when a public Flowable source or operator has no line
here (or no reason in ``NOT_VERIFIABLE``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rstreams import BackpressureOverflow, Flowable, schedulers

BIG = 2**31 - 1  # the element count the kit uses for its demand-overflow test (rule 3.17)


@dataclass(frozen=True)
class Entry:
    make: Callable[[int], Any]
    max_elements: int = BIG
    failed: Callable[[], Any] | None = None
    asynchronous: bool = False


def _r(n: int) -> Flowable[int]:
    return Flowable.range(0, n)


def _boom() -> Flowable[Any]:
    return Flowable.error(RuntimeError("failed publisher"))


def _create(n: int) -> Flowable[int]:
    def emit(e: Any) -> None:
        for i in range(n):
            if e.is_cancelled:
                return
            e.on_next(i)
        e.on_complete()

    return Flowable.create(emit)


def _generate(n: int) -> Flowable[int]:
    def step(i: int, e: Any) -> int:
        if i < n:
            e.on_next(i)
        else:
            e.on_complete()
        return i + 1

    return Flowable.generate(lambda: 0, step)


_pool = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="tck-future")


def _future(n: int) -> Flowable[int]:
    return Flowable.from_future(_pool.submit(lambda: 7))


async def _agen(n: int) -> Any:
    for i in range(n):
        yield i


async def _seven() -> int:
    await asyncio.sleep(0)
    return 7


async def _double(x: int) -> int:
    return x * 2


async def _nothing(x: int) -> None:
    return None


async def _one(x: int) -> Any:
    yield x


def _group_by(n: int) -> Flowable[int]:
    return _r(n).group_by(lambda x: x % 3).flat_map(lambda g: g, max_concurrency=3)


ENTRIES: dict[str, Entry] = {
    # ---- sources
    "just": Entry(lambda n: Flowable.just(*range(n)), max_elements=1000),
    "empty": Entry(lambda n: Flowable.empty(), max_elements=0),
    "error": Entry(lambda n: _r(n), failed=_boom),
    "from_iterable": Entry(lambda n: Flowable.from_iterable(range(n)), failed=_boom),
    "range": Entry(_r, failed=_boom),
    "defer": Entry(lambda n: Flowable.defer(lambda: _r(n)), failed=lambda: Flowable.defer(_boom)),
    "from_callable": Entry(lambda n: Flowable.from_callable(lambda: 1), max_elements=1,
                           failed=lambda: Flowable.from_callable(lambda: 1 // 0)),
    "from_publisher": Entry(lambda n: Flowable.from_publisher(_r(n))),
    "from_future": Entry(_future, max_elements=1, asynchronous=True),
    "generate": Entry(_generate),
    "create": Entry(_create, max_elements=100_000),
    "using": Entry(lambda n: Flowable.using(lambda: n, _r, lambda _: None)),
    "concat": Entry(lambda n: Flowable.concat(_r(n // 2), _r(n - n // 2))),
    "merge": Entry(lambda n: Flowable.merge(_r(n // 2), _r(n - n // 2))),
    "zip": Entry(lambda n: Flowable.zip(_r(n), _r(n + 1), operator.add)),
    "combine_latest": Entry(lambda n: Flowable.combine_latest(Flowable.just(0), _r(n), operator.add)),
    "amb": Entry(lambda n: Flowable.amb(_r(n), Flowable.never())),
    # interval cannot be backpressured (it signals MissingBackpressureError): buffered, as RxJava's TCK does
    "interval": Entry(lambda n: Flowable.interval(0.0005, initial_delay=0.02).on_backpressure_buffer().take(n), max_elements=1000,
                      asynchronous=True),
    "timer": Entry(lambda n: Flowable.timer(0.001), max_elements=1, asynchronous=True),
    "from_async_iterable": Entry(lambda n: Flowable.from_async_iterable(_agen(n)), max_elements=1000, asynchronous=True),
    "from_coroutine": Entry(lambda n: Flowable.from_coroutine(_seven), max_elements=1, asynchronous=True),
    # ---- transform and filter
    "map": Entry(lambda n: _r(n).map(lambda x: x + 1)),
    "map_hidden": Entry(lambda n: _r(n).hide().map(lambda x: x + 1)),
    "filter": Entry(lambda n: Flowable.range(0, 2 * n).filter(lambda x: x % 2 == 0), max_elements=BIG // 2),
    "filter_hidden": Entry(lambda n: Flowable.range(0, 2 * n).hide().filter(lambda x: x % 2 == 0), max_elements=BIG // 2),
    "map_not_none": Entry(lambda n: Flowable.range(0, 2 * n).map_not_none(lambda x: x if x % 2 == 0 else None), max_elements=BIG // 2),
    "map_not_none_hidden": Entry(
        lambda n: Flowable.range(0, 2 * n).hide().map_not_none(lambda x: x if x % 2 == 0 else None), max_elements=BIG // 2
    ),
    "hide": Entry(lambda n: _r(n).hide()),
    "log": Entry(lambda n: _r(n).log("tck", signals=["on_next", "request", "cancel"]), failed=lambda: _boom().log("tck")),
    "name": Entry(lambda n: _r(n).name("tck"), failed=lambda: _boom().name("tck")),
    "tag": Entry(lambda n: _r(n).hide().name("tck").tag("kind", "tck")),
    "checkpoint": Entry(lambda n: _r(n).checkpoint("tck", trace=True), failed=lambda: _boom().checkpoint("tck")),
    "flat_map_iterable": Entry(lambda n: _r(n).flat_map_iterable(lambda x: [x])),
    "flat_map_iterable_hidden": Entry(lambda n: _r(n).hide().flat_map_iterable(lambda x: [x])),
    "scan": Entry(lambda n: _r(n).scan(operator.add)),
    "scan_hidden": Entry(lambda n: _r(n - 1).hide().scan(operator.add, seed=0) if n else Flowable.empty()),
    "buffer": Entry(lambda n: Flowable.range(0, 2 * n).hide().buffer(2), max_elements=100_000),
    "take": Entry(lambda n: Flowable.range(0, n + 10).take(n)),
    "take_hidden": Entry(lambda n: Flowable.range(0, n + 10).hide().take(n)),
    "take_last": Entry(lambda n: Flowable.range(0, n + 10).hide().take_last(n), max_elements=100_000),
    "take_while": Entry(lambda n: Flowable.range(0, n + 10).hide().take_while(lambda x: x < n)),
    "take_until": Entry(lambda n: _r(n + 1).hide().take_until(lambda x: x == n - 1) if n else Flowable.empty()),
    "skip": Entry(lambda n: Flowable.range(0, n + 3).hide().skip(3)),
    "skip_last": Entry(lambda n: Flowable.range(0, n + 3).hide().skip_last(3), max_elements=100_000),
    "skip_while": Entry(lambda n: Flowable.range(0, n + 3).hide().skip_while(lambda x: x < 3)),
    "distinct": Entry(lambda n: _r(n).hide().distinct(), max_elements=100_000),
    "distinct_until_changed": Entry(lambda n: _r(n).hide().distinct_until_changed()),
    "element_at": Entry(lambda n: _r(10).hide().element_at(3), max_elements=1),
    "element_at_or_error": Entry(lambda n: _r(10).hide().element_at_or_error(3), max_elements=1),
    "first": Entry(lambda n: _r(10).hide().first(), max_elements=1),
    "first_element": Entry(lambda n: _r(10).hide().first_element(), max_elements=1),
    "last": Entry(lambda n: _r(10).hide().last(), max_elements=1),
    "ignore_elements": Entry(lambda n: _r(10).hide().ignore_elements(), max_elements=0),
    "default_if_empty": Entry(lambda n: Flowable.empty().default_if_empty(1), max_elements=1),
    "switch_if_empty": Entry(lambda n: Flowable.empty().switch_if_empty(_r(n))),
    "start_with": Entry(lambda n: _r(n - 1).hide().start_with(-1) if n else Flowable.empty()),
    "concat_with": Entry(lambda n: _r(n // 2).hide().concat_with(_r(n - n // 2))),
    "merge_with": Entry(lambda n: _r(n // 2).merge_with(_r(n - n // 2))),
    "zip_with": Entry(lambda n: _r(n).zip_with(_r(n), operator.add)),
    "concat_map": Entry(lambda n: _r(n).concat_map(lambda x: Flowable.just(x))),
    "concat_map_inner": Entry(lambda n: _r(n).hide().concat_map(lambda x: Flowable.just(x).hide())),
    # ---- aggregates (single-valued)
    "reduce": Entry(lambda n: _r(10).hide().reduce(operator.add), max_elements=1),
    "collect": Entry(lambda n: _r(10).hide().collect(list, list.append), max_elements=1),
    "to_list": Entry(lambda n: _r(10).hide().to_list(), max_elements=1),
    "to_dict": Entry(lambda n: _r(10).hide().to_dict(lambda x: x), max_elements=1),
    "count": Entry(lambda n: _r(10).hide().count(), max_elements=1),
    "all": Entry(lambda n: _r(10).hide().all(lambda x: x >= 0), max_elements=1),
    "any": Entry(lambda n: _r(10).hide().any(lambda x: x > 5), max_elements=1),
    "contains": Entry(lambda n: _r(10).hide().contains(5), max_elements=1),
    # ---- errors and lifecycle
    "on_error_return": Entry(lambda n: _r(n).hide().on_error_return(lambda e: -1)),
    "on_error_return_item": Entry(lambda n: _r(n).hide().on_error_return_item(-1)),
    "on_error_resume_next": Entry(lambda n: _r(n).hide().on_error_resume_next(Flowable.empty())),
    "on_error_complete": Entry(lambda n: _r(n).hide().on_error_complete()),
    "retry": Entry(lambda n: _r(n).hide().retry(3)),
    "retry_policy": Entry(lambda n: _r(n).hide().retry(__import__("rstreams.retry", fromlist=["Retry"]).Retry.max(2))),
    "retry_when": Entry(lambda n: _r(n).hide().retry_when(lambda errors: errors)),
    "repeat": Entry(lambda n: Flowable.just(1).repeat(n)),
    "repeat_when": Entry(lambda n: Flowable.just(1).repeat_when(lambda done: done).take(n), max_elements=10_000),
    "do_on_next": Entry(lambda n: _r(n).hide().do_on_next(lambda x: None)),
    "do_on_error": Entry(lambda n: _r(n).hide().do_on_error(lambda e: None)),
    "do_on_complete": Entry(lambda n: _r(n).hide().do_on_complete(lambda: None)),
    "do_on_subscribe": Entry(lambda n: _r(n).hide().do_on_subscribe(lambda s: None)),
    "do_on_request": Entry(lambda n: _r(n).hide().do_on_request(lambda k: None)),
    "do_on_cancel": Entry(lambda n: _r(n).hide().do_on_cancel(lambda: None)),
    "do_finally": Entry(lambda n: _r(n).hide().do_finally(lambda: None)),
    "do_on_terminate": Entry(lambda n: _r(n).hide().do_on_terminate(lambda: None)),
    "do_after_terminate": Entry(lambda n: _r(n).hide().do_after_terminate(lambda: None)),
    "do_on_each": Entry(lambda n: _r(n).hide().do_on_each(on_next=lambda x: None, on_complete=lambda: None)),
    "lift": Entry(lambda n: _r(n).lift(lambda d: d)),
    "compose": Entry(lambda n: _r(n).compose(lambda f: f.hide())),
    # ---- backpressure operators
    "on_backpressure_buffer": Entry(lambda n: _r(n).hide().on_backpressure_buffer(), max_elements=100_000),
    "on_backpressure_buffer_bounded": Entry(
        lambda n: _r(n).hide().on_backpressure_buffer(1 << 20, BackpressureOverflow.ERROR), max_elements=100_000),
    "rebatch_requests": Entry(lambda n: _r(n).hide().rebatch_requests(16)),
    # ---- asynchronous boundaries
    "subscribe_on": Entry(lambda n: _r(n).subscribe_on(schedulers.io()), asynchronous=True),
    "subscribe_on_callable": Entry(lambda n: Flowable.from_callable(lambda: 1).subscribe_on(schedulers.io()),
                                   max_elements=1, asynchronous=True,
                                   failed=lambda: Flowable.from_callable(lambda: 1 // 0).subscribe_on(schedulers.io())),
    "observe_on": Entry(lambda n: _r(n).observe_on(schedulers.single()), asynchronous=True),
    "flat_map": Entry(lambda n: _r(n).flat_map(lambda x: Flowable.just(x).hide())),
    "flat_map_async_inners": Entry(lambda n: _r(n).flat_map(lambda x: Flowable.just(x).subscribe_on(schedulers.io()), 4),
                                   max_elements=10_000, asynchronous=True),
    "flat_map_callable_inners": Entry(
        lambda n: _r(n).flat_map(lambda x: Flowable.from_callable(lambda: x).subscribe_on(schedulers.io()), 4),
        max_elements=10_000, asynchronous=True),
    "switch_map": Entry(lambda n: Flowable.just(0).switch_map(lambda _: _r(n))),
    "concat_map_eager": Entry(lambda n: _r(n).concat_map_eager(lambda x: Flowable.just(x).hide())),
    "with_latest_from": Entry(lambda n: _r(n).hide().with_latest_from(Flowable.just(0), operator.add)),
    "skip_until": Entry(lambda n: _r(n).hide().skip_until(Flowable.empty())),
    "amb_with": Entry(lambda n: _r(n).amb_with(Flowable.never())),
    "parallel": Entry(lambda n: _r(n).parallel(2).run_on(schedulers.computation()).sequential(), max_elements=100_000,
                      asynchronous=True),
    "map_async": Entry(lambda n: _r(n).map_async(_double, max_concurrency=4), max_elements=10_000, asynchronous=True),
    "do_on_next_async": Entry(lambda n: _r(n).do_on_next_async(_nothing), max_elements=10_000, asynchronous=True),
    "flat_map_async": Entry(lambda n: _r(n).flat_map_async(_one, max_concurrency=4), max_elements=10_000, asynchronous=True),
    # ---- multicast
    "publish": Entry(lambda n: _r(n).publish().auto_connect()),
    "replay": Entry(lambda n: _r(n).replay().auto_connect(), max_elements=100_000),
    "share": Entry(lambda n: _r(n).share()),
    "cache": Entry(lambda n: _r(n).cache(), max_elements=100_000),
    # ---- time, grouping, windows
    "delay": Entry(lambda n: _r(n).delay(0.0005), max_elements=10_000, asynchronous=True),
    "delay_subscription": Entry(lambda n: _r(n).delay_subscription(0.0005), asynchronous=True),
    "timeout": Entry(lambda n: _r(n).timeout(30.0), asynchronous=True),
    "timeout_selector": Entry(lambda n: _r(n).timeout_selector(None, lambda x: Flowable.never()), max_elements=10_000),
    "timestamp": Entry(lambda n: _r(n).timestamp()),
    "time_interval": Entry(lambda n: _r(n).time_interval()),
    "take_for": Entry(lambda n: _r(n).take_for(60.0), asynchronous=True),
    "skip_for": Entry(lambda n: _r(n).skip_for(0.0), asynchronous=True),
    "group_by": Entry(_group_by, max_elements=10_000),
    "window": Entry(lambda n: Flowable.range(0, 2 * n).window(2).flat_map(lambda w: w.take(1)), max_elements=10_000),
    "window_timed": Entry(lambda n: _r(n).window_timed(60.0, n).flat_map(lambda w: w) if n else Flowable.empty(),
                          max_elements=10_000, asynchronous=True),
    # buffer_timed cannot be backpressured (MissingBackpressureError): buffered after it, as in RxJava's TCK
    "buffer_timed": Entry(lambda n: Flowable.range(0, n).buffer_timed(60.0, 1).on_backpressure_buffer(), max_elements=10_000,
                          asynchronous=True),
}

#: Public Flowable methods that return a Flowable but are not (or not alone) Publisher factories.
NOT_VERIFIABLE: dict[str, str] = {
    "never": "signals nothing but on_subscribe: it cannot emit the n elements the kit asks for",
    "on_backpressure_drop": "drops what arrives without demand: its element count depends on timing, not on n",
    "on_backpressure_latest": "keeps only the latest undemanded element: its count depends on timing, not on n",
    "debounce": "emits depending on timing (drops bursts)",
    "sample": "emits depending on timing (samples)",
    "throttle_last": "emits depending on timing (samples)",
    "throttle_first": "emits depending on timing (drops)",
    "throttle_latest": "emits depending on timing (drops)",
}


def _merge_topic_tables() -> None:
    """Topic tables (``tck_entries_*.py`` beside this file, one per group of operators) add their
    ``ENTRIES``, ``NOT_VERIFIABLE`` and ``CONSUMERS`` (methods that consume rather than publish) here;
    a name defined twice is an error, never a silent override."""
    import importlib
    import pathlib

    for path in sorted(pathlib.Path(__file__).parent.glob("tck_entries_*.py")):
        mod = importlib.import_module(path.stem)
        for mine, theirs in ((ENTRIES, getattr(mod, "ENTRIES", {})), (NOT_VERIFIABLE, getattr(mod, "NOT_VERIFIABLE", {}))):
            clash = set(mine) & set(theirs)
            if clash:
                raise ValueError(f"{path.name} defines TCK lines already defined: {sorted(clash)}")
            mine.update(theirs)
        CONSUMERS.update(getattr(mod, "CONSUMERS", set()))


#: Public Flowable methods that consume a Flowable (they are not Publisher factories), beyond the
#: ones ``tests/meta/test_tck_coverage.py`` lists itself.
CONSUMERS: set[str] = set()

_merge_topic_tables()
