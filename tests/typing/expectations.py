# pyright: strict
"""What an editor infers for the public API: checked by ``mypy --strict`` and ``pyright --strict``.

Not a test module (it is never imported by pytest): ``test_typing.py`` runs both checkers over it.
Every line states the type a user sees on hover; a wrong or "partially unknown" type fails the
checker that infers it. Lambdas carry no annotations on purpose: their parameter types must flow
from the Flowable they are applied to.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import AsyncIterator
from typing import Any, assert_type

from rstreams import Flowable, Publisher, schedulers
from rstreams.flowable import (
    BackpressureStrategy,
    ConnectableFlowable,
    Disposable,
    Emitter,
    FlowableEmitter,
    GroupedFlowable,
    ParallelFlowable,
    Timed,
)
from rstreams.testing import TestScheduler, TestSubscriber

ints = Flowable.just(1, 2, 3)
strs = Flowable.from_iterable(["a", "b"])
floats = Flowable.just(1.5)

# ------------------------------------------------------------------------------------ sources
assert_type(ints, Flowable[int])
assert_type(strs, Flowable[str])
assert_type(Flowable.from_iterable(lambda: iter([b"x"])), Flowable[bytes])
assert_type(Flowable.range(0, 3), Flowable[int])
assert_type(Flowable.range(range(0, 10, 2)), Flowable[int])
assert_type(Flowable.from_callable(lambda: 42), Flowable[int])
assert_type(Flowable.defer(lambda: Flowable.just("x")), Flowable[str])
assert_type(Flowable.from_publisher(ints), Flowable[int])
assert_type(Flowable.concat(ints, Flowable.just(4)), Flowable[int])
assert_type(Flowable.merge(ints, Flowable.just(4), max_concurrency=2), Flowable[int])
assert_type(Flowable.concat([ints, Flowable.just(4)]), Flowable[int])
assert_type(Flowable.merge([ints, Flowable.just(4)], max_concurrency=2), Flowable[int])
assert_type(Flowable.amb([ints, Flowable.just(4)]), Flowable[int])
assert_type(Flowable.amb(ints, Flowable.just(4)), Flowable[int])
assert_type(Flowable.amb(ints, Flowable.just(4)), Flowable[int])
assert_type(Flowable.empty(), Flowable[Any])
assert_type(Flowable.never(), Flowable[Any])
assert_type(Flowable.error(ValueError()), Flowable[Any])
assert_type(Flowable.interval(1.0), Flowable[int])
assert_type(Flowable.timer(1.0), Flowable[int])

cf_future: concurrent.futures.Future[str] = concurrent.futures.Future()
assert_type(Flowable.from_future(cf_future), Flowable[str])


def _step(state: int, emitter: Emitter[str]) -> int:
    emitter.on_next(str(state))
    return state + 1


assert_type(Flowable.generate(lambda: 0, _step), Flowable[str])


def _push(emitter: FlowableEmitter[float]) -> None:
    emitter.on_next(1.0)
    emitter.on_complete()


assert_type(Flowable.create(_push, BackpressureStrategy.LATEST), Flowable[float])


def _acquire() -> list[int]:
    return [1, 2]


def _stream(xs: list[int]) -> Flowable[int]:
    return Flowable.from_iterable(xs)


assert_type(Flowable.using(_acquire, _stream, lambda xs: xs.clear()), Flowable[int])


async def _agen() -> AsyncIterator[str]:
    yield "a"


async def _coro() -> bytes:
    return b""


assert_type(Flowable.from_async_iterable(_agen()), Flowable[str])
assert_type(Flowable.from_coroutine(_coro), Flowable[bytes])

# ------------------------------------------------------------------ zip, combine_latest, ...
assert_type(Flowable.zip(ints, strs), Flowable[tuple[int, str]])
assert_type(Flowable.zip(ints, strs, floats), Flowable[tuple[int, str, float]])
assert_type(Flowable.zip(ints, strs, floats, ints), Flowable[tuple[int, str, float, int]])
assert_type(Flowable.zip(ints, strs, lambda i, s: f"{s}{i}"), Flowable[str])
assert_type(Flowable.zip(ints, strs, floats, lambda i, s, f: (f, i)), Flowable[tuple[float, int]])
assert_type(Flowable.zip(ints, strs, floats, ints, lambda i, s, f, j: (s, j)), Flowable[tuple[str, int]])
assert_type(Flowable.zip(ints, strs, prefetch=16), Flowable[tuple[int, str]])
assert_type(Flowable.combine_latest(ints, strs), Flowable[tuple[int, str]])
assert_type(Flowable.combine_latest(ints, strs, floats), Flowable[tuple[int, str, float]])
assert_type(Flowable.combine_latest(ints, strs, floats, ints), Flowable[tuple[int, str, float, int]])
assert_type(Flowable.combine_latest(ints, strs, lambda i, s: f"{s}{i}"), Flowable[str])
assert_type(Flowable.combine_latest(ints, strs, floats, lambda i, s, f: float(i) * f), Flowable[float])
assert_type(Flowable.combine_latest(ints, strs, floats, ints, lambda i, s, f, j: (i, j)), Flowable[tuple[int, int]])
assert_type(ints.with_latest_from(strs), Flowable[tuple[int, str]])
assert_type(ints.with_latest_from(strs, floats), Flowable[tuple[int, str, float]])
assert_type(ints.with_latest_from(strs, floats, ints), Flowable[tuple[int, str, float, int]])
assert_type(ints.with_latest_from(strs, lambda i, s: s * i), Flowable[str])
assert_type(ints.with_latest_from(strs, floats, lambda i, s, f: f), Flowable[float])
assert_type(ints.zip_with(strs), Flowable[tuple[int, str]])
assert_type(ints.zip_with(strs, lambda i, s: len(s) + i), Flowable[int])

# ------------------------------------------------------------------ transform, with lambdas
assert_type(ints.map(lambda x: str(x)), Flowable[str])
assert_type(ints.filter(lambda x: x > 1), Flowable[int])
assert_type(ints.map_not_none(lambda x: str(x) if x > 1 else None), Flowable[str])
assert_type(ints.checkpoint("parsed", trace=True), Flowable[int])
assert_type(ints.name("ints").tag("kind", "numbers"), Flowable[int])
assert_type(ints.log("ints", logging.DEBUG, ["request", "on_next"]), Flowable[int])
assert_type(ints.flat_map(lambda x: Flowable.just(x, x * 10)), Flowable[int])
assert_type(ints.flat_map(lambda x: Flowable.just(str(x)), max_concurrency=4), Flowable[str])
assert_type(ints.concat_map(lambda x: Flowable.range(0, x)), Flowable[int])
assert_type(ints.concat_map_eager(lambda x: Flowable.just(float(x))), Flowable[float])
assert_type(ints.switch_map(lambda x: Flowable.just(str(x))), Flowable[str])
assert_type(ints.flat_map_iterable(lambda x: [str(x)]), Flowable[str])
assert_type(ints.reduce(lambda a, b: a + b), Flowable[int])
assert_type(ints.reduce(lambda acc, x: acc + str(x), ""), Flowable[str])
assert_type(ints.reduce(lambda acc, x: [*acc, x], seed=list[int]()), Flowable[list[int]])
assert_type(ints.scan(lambda a, b: a + b), Flowable[int])
assert_type(ints.scan(lambda acc, x: acc + x, 0.0), Flowable[float])
assert_type(ints.collect(lambda: set[int](), lambda acc, x: acc.add(x)), Flowable[set[int]])
assert_type(ints.to_list(), Flowable[list[int]])
assert_type(strs.to_dict(len), Flowable[dict[int, str]])
assert_type(strs.to_dict(len, lambda s: s.upper()), Flowable[dict[int, str]])
assert_type(strs.to_dict(lambda s: s, len), Flowable[dict[str, int]])
assert_type(ints.count(), Flowable[int])
assert_type(ints.all(lambda x: x > 0), Flowable[bool])
assert_type(ints.any(lambda x: x > 0), Flowable[bool])
assert_type(ints.contains(2), Flowable[bool])
assert_type(ints.buffer(2), Flowable[list[int]])
assert_type(ints.buffer_timed(1.0), Flowable[list[int]])
assert_type(ints.window(2), Flowable[Flowable[int]])
assert_type(ints.window(2).flat_map(lambda w: w.to_list()), Flowable[list[int]])
assert_type(ints.timestamp(), Flowable[Timed[int]])
assert_type(ints.time_interval().map(lambda t: t.value), Flowable[int])
assert_type(ints.take(2).skip(1).distinct().distinct_until_changed(), Flowable[int])
assert_type(ints.first(), Flowable[int])
assert_type(ints.last(0), Flowable[int])
assert_type(ints.element_at(1), Flowable[int])
assert_type(ints.start_with(0).concat_with(ints).merge_with(ints), Flowable[int])
assert_type(ints.on_error_return(lambda e: -1).on_error_resume_next(ints).retry(3).repeat(2), Flowable[int])
assert_type(ints.do_on_next(print).do_on_error(print).do_finally(lambda: None), Flowable[int])
assert_type(ints.map_async(lambda x: asyncio.sleep(0, str(x))), Flowable[str])

# group_by: the key type from key_fn, the value type from value_fn (default: the element)
assert_type(ints.group_by(lambda x: x % 2), Flowable[GroupedFlowable[int, int]])
assert_type(ints.group_by(lambda x: x % 2 == 0, lambda x: str(x)), Flowable[GroupedFlowable[bool, str]])
assert_type(
    ints.group_by(lambda x: x % 2).flat_map(lambda g: g.to_list().map(lambda xs: (g.key, xs))),
    Flowable[tuple[int, list[int]]],
)

# pipe: each stage's type flows into the next
assert_type(ints.pipe(), Flowable[int])
assert_type(ints.pipe(lambda f: f.map(str)), Flowable[str])
assert_type(ints.pipe(lambda f: f.map(str), lambda f: f.map(len), lambda f: f.to_list()), Flowable[list[int]])
assert_type(ints.compose(lambda f: f.map(str)), Flowable[str])
assert_type(ints.to(lambda f: f.count()), Flowable[int])

# ------------------------------------------------------------------ boundaries and multicast
assert_type(ints.subscribe_on(schedulers.io()).observe_on(schedulers.single()), Flowable[int])
assert_type(ints.delay(1.0, TestScheduler()), Flowable[int])
assert_type(ints.publish(), ConnectableFlowable[int])
assert_type(ints.replay(2), ConnectableFlowable[int])
assert_type(ints.share().cache(), Flowable[int])
assert_type(ints.parallel(2), ParallelFlowable[int])
assert_type(ints.parallel(2).run_on(schedulers.computation()).map(str).sequential(), Flowable[str])

# ------------------------------------------------------------------ subscribing and blocking
assert_type(ints.test(), TestSubscriber[int])
assert_type(ints.subscribe(print), Disposable)
assert_type(ints.subscribe(print, print, lambda: None), Disposable)
assert_type(ints.subscribe(on_next=lambda x: print(x + 1)), Disposable)
assert_type(ints.subscribe(), Disposable)
assert_type(ints.subscribe(TestSubscriber[int]()), None)
assert_type(ints.blocking_first(), int)
assert_type(ints.blocking_last(), int)
assert_type(ints.blocking_single(), int)
assert_type(ints.to_future(), concurrent.futures.Future[int])
assert_type(list(ints), list[int])
assert_type(ints.to_list().blocking_first(), list[int])
publisher: Publisher[int] = ints


async def consume() -> None:
    async for x in ints:
        assert_type(x, int)
    assert_type(await ints.to_list(), list[int])
