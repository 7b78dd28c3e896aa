"""Reactive Streams rule tests (``test_rule_*``) of ``async for x in flowable`` / ``to_async_iterator``.

Their other tests (scenarios, properties, arguments) are in ``tests/aio/test_aio_iterator.py``."""

from __future__ import annotations

import pytest

from aio.test_aio_iterator import collect
from aio.util import run
from rstreams import Flowable


def test_rule_2_13_none_from_mapper_is_type_error() -> None:
    with pytest.raises(TypeError, match="map"):
        run(collect(Flowable.range(0, 3).map(lambda x: None)))
    with pytest.raises(TypeError):
        run(collect(Flowable.range(0, 3).hide().map(lambda x: None)))


@pytest.mark.parametrize("hidden", [False, True])
@pytest.mark.parametrize("prefetch", [1, 16, 128])
def test_rule_3_13_break_cancels_upstream_within_one_batch(hidden: bool, prefetch: int) -> None:
    produced = [0]
    cancelled: list[bool] = []
    src = Flowable.range(0, 1_000_000)
    if hidden:
        src = src.hide()
    src = src.do_on_next(lambda _: produced.__setitem__(0, produced[0] + 1)).do_on_cancel(
        lambda: cancelled.append(True)
    )
    k = 10

    async def main() -> None:
        n = 0
        async for _ in src.to_async_iterator(prefetch=prefetch):
            n += 1
            if n == k:
                break
        assert cancelled == [True]  # synchronously, before the next statement

    run(main())
    assert produced[0] <= k + prefetch
