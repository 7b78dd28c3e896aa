"""One-shot iterables: ``from_iterable(iterator)`` can be iterated once; a second
subscription (another subscriber, a retry, a repeat) is an ``on_error(OneShotIteratorError)`` instead
of the silently shortened rest of the iterator. A factory (a generator function, a lambda) gives
every subscription a fresh pass. Fused and unfused (``hide()``) paths give the same signals."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rstreams import Flowable
from rstreams.errors import OneShotIteratorError
from rstreams.testing import TestSubscriber


def gen(n: int = 4) -> Iterator[int]:
    yield from range(n)


def parse(x: int) -> int:
    if x == 1:
        raise ValueError("bad record 1")
    return x * 10


def _outcome(ts: TestSubscriber[Any]) -> tuple[list[Any], list[type[BaseException]], int]:
    ts.assert_no_violations()
    return ts.values, [type(e) for e in ts.errors], ts.completions


def _both(build: Callable[[Callable[[], Flowable[int]]], TestSubscriber[Any]]) -> Any:
    """Run ``build`` over the fused source and over its hidden (unfused) twin; the outcomes must match."""
    fused = _outcome(build(lambda: Flowable.from_iterable(gen())))
    plain = _outcome(build(lambda: Flowable.from_iterable(gen()).hide()))
    assert fused == plain
    return fused


@pytest.mark.parametrize("hide", [False, True], ids=["fused", "unfused"])
def test_second_subscription_to_a_generator_signals_one_shot_error(hide: bool) -> None:
    f = Flowable.from_iterable(gen())
    if hide:
        f = f.hide()
    f.test().assert_result(0, 1, 2, 3).assert_no_violations()
    ts = f.test()
    ts.assert_failure(OneShotIteratorError, match="one-shot iterator").assert_no_violations()
    ts.assert_error(RuntimeError, match=r"Flowable\.from_iterable\(make_items\)")
    ts.assert_error(OneShotIteratorError, match=r"Flowable\.defer")


@pytest.mark.parametrize("hide", [False, True], ids=["fused", "unfused"])
def test_second_subscription_after_a_cancelled_first_still_errors(hide: bool) -> None:
    f = Flowable.from_iterable(gen())
    if hide:
        f = f.hide()
    first = f.test(1)
    first.assert_values(0).cancel()
    f.test().assert_failure(OneShotIteratorError).assert_no_violations()
    first.assert_no_violations()


def test_map_retry_over_a_generator_errors_instead_of_losing_an_element() -> None:
    # before: the retry resumed the generator after the failed element: [0, 20, 30] and complete
    values, errors, completions = _both(lambda src: src().map(parse).retry(2).test())
    assert (values, errors, completions) == ([0], [OneShotIteratorError], 0)


def test_map_retry_over_a_factory_reiterates_from_the_start() -> None:
    attempts: list[int] = []

    def flaky(x: int) -> int:
        if x == 1 and len(attempts) < 2:
            attempts.append(x)
            raise ValueError("transient")
        return x * 10

    ts = Flowable.from_iterable(gen).map(flaky).retry(2).test()
    ts.assert_result(0, 0, 0, 10, 20, 30).assert_no_violations()


def test_repeat_concat_zip_over_a_generator_same_signals_fused_and_unfused() -> None:
    assert _both(lambda src: src().repeat(2).test()) == ([0, 1, 2, 3], [OneShotIteratorError], 0)
    assert _both(lambda src: (lambda f: Flowable.concat(f, f))(src()).test()) == (
        [0, 1, 2, 3],
        [OneShotIteratorError],
        0,
    )
    assert _both(lambda src: (lambda f: Flowable.zip(f, f, lambda a, b: (a, b)))(src()).test()) == (
        [],
        [OneShotIteratorError],
        0,
    )


@pytest.mark.parametrize("hide", [False, True], ids=["fused", "unfused"])
def test_a_factory_gives_every_subscriber_a_fresh_pass(hide: bool) -> None:
    f = Flowable.from_iterable(gen)  # a generator function
    g = Flowable.from_iterable(lambda: iter([1, 2]))
    if hide:
        f, g = f.hide(), g.hide()
    for _ in range(3):
        f.test().assert_result(0, 1, 2, 3).assert_no_violations()
        g.test().assert_result(1, 2).assert_no_violations()
    f.repeat(2).test().assert_result(0, 1, 2, 3, 0, 1, 2, 3).assert_no_violations()


def test_defer_reiterates_a_generator() -> None:
    f = Flowable.defer(lambda: Flowable.from_iterable(gen(2)))
    f.repeat(2).test().assert_result(0, 1, 0, 1).assert_no_violations()


def test_reiterable_collections_and_iterables_are_not_one_shot() -> None:
    class Fresh:
        def __iter__(self) -> Iterator[int]:
            return iter([7, 8])

    for src in ([1, 2], (1, 2), range(1, 3), {1: "a", 2: "b"}):
        f = Flowable.from_iterable(src)
        f.test().assert_result(1, 2).assert_no_violations()
        f.test().assert_result(1, 2).assert_no_violations()
    f2 = Flowable.from_iterable(Fresh())
    f2.repeat(2).test().assert_result(7, 8, 7, 8).assert_no_violations()


def test_a_factory_returning_a_non_iterable_is_an_on_error() -> None:
    Flowable.from_iterable(lambda: 42).test().assert_failure(TypeError).assert_no_violations()  # type: ignore[arg-type, return-value]


def test_an_async_factory_is_refused_at_assembly() -> None:
    async def agen_fn() -> list[int]:
        await asyncio.sleep(0)
        return [1]

    with pytest.raises(TypeError, match="async function"):
        Flowable.from_iterable(agen_fn)  # type: ignore[arg-type]


def _race_once() -> list[TestSubscriber[int]]:
    f = Flowable.from_iterable(gen(100))
    barrier = threading.Barrier(2)
    results: list[TestSubscriber[int]] = []
    lock = threading.Lock()

    def run() -> None:
        barrier.wait()
        ts = f.test()
        with lock:
            results.append(ts)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    return results


def test_race_two_subscriptions_at_once_only_one_gets_the_iterator() -> None:
    for _ in range(50):
        results = _race_once()
        outcomes = sorted((len(ts.values), [type(e) for e in ts.errors] == [OneShotIteratorError]) for ts in results)
        assert outcomes == [(0, True), (100, False)]
        for ts in results:
            ts.assert_no_violations()
