"""Assembly tracing: an error passing through a traced stage gets a note naming the operator and
the user's file:line that built it; off, the facade is untouched (zero cost)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from rstreams import Flowable, plugins, schedulers
from rstreams.testing import TestSubscriber

HERE = os.path.basename(__file__)


class Boom(Exception):
    pass


def parse(x: int) -> int:
    if x == 3:
        raise Boom(f"bad record {x}")
    return x


def keep(x: int) -> bool:
    return True


def line_of(marker: str) -> int:
    with open(__file__) as f:
        for i, text in enumerate(f, 1):
            if marker in text and "line_of" not in text:
                return i
    raise AssertionError(marker)


@pytest.fixture
def tracing() -> Iterator[None]:
    plugins.enable_assembly_tracing()
    try:
        yield
    finally:
        plugins.reset()


def notes(ts: TestSubscriber[Any]) -> list[str]:
    ts.assert_error(Boom).assert_no_violations()
    return list(getattr(ts.errors[0], "__notes__", []))


def test_off_by_default_the_facade_is_the_original() -> None:
    assert not plugins.assembly_tracing_enabled()
    assert "__wrapped__" not in vars(Flowable.map)
    ts = Flowable.range(0, 5).map(parse).test()
    assert notes(ts) == []


def test_enable_then_reset_restores_every_method(tracing: None) -> None:
    assert plugins.assembly_tracing_enabled()
    assert hasattr(Flowable.map, "__wrapped__") and hasattr(Flowable.range, "__wrapped__")
    assert hasattr(Flowable.delay, "__wrapped__")  # the mixins' methods too
    plugins.reset()
    assert not hasattr(Flowable.map, "__wrapped__") and not hasattr(Flowable.delay, "__wrapped__")
    assert "delay" not in vars(Flowable)  # inherited again, not copied


def test_fused_chain_names_the_raising_stage_and_those_after_it(tracing: None) -> None:
    ts = Flowable.range(0, 5).map(parse).filter(keep).test()  # fused-chain
    n = line_of("# fused-chain")
    assert notes(ts) == [f"at .map(parse) ({HERE}:{n})", f"at .filter(keep) ({HERE}:{n})"]
    ts.assert_values(0, 1, 2)


def test_each_line_of_a_multi_line_chain(tracing: None) -> None:
    ts = (
        Flowable.range(0, 5)
        .hide()
        .map(parse)  # map-line
        .filter(keep)  # filter-line
        .test()
    )
    assert notes(ts) == [
        f"at .map(parse) ({HERE}:{line_of('# map-line')})",
        f"at .filter(keep) ({HERE}:{line_of('# filter-line')})",
    ]


def test_an_error_of_the_source_passes_every_stage(tracing: None) -> None:
    def records() -> Iterator[int]:
        yield 1
        raise Boom("disk")

    ts = Flowable.from_iterable(records).map(abs).filter(keep).test()  # source-chain
    n = line_of("# source-chain")
    assert notes(ts) == [
        f"at Flowable.from_iterable(records) ({HERE}:{n})",
        f"at .map(abs) ({HERE}:{n})",
        f"at .filter(keep) ({HERE}:{n})",
    ]


def test_across_threads_observe_on_and_flat_map(tracing: None) -> None:
    ts = (
        Flowable.range(0, 5)
        .observe_on(schedulers.single())  # observe-line
        .flat_map(lambda x: Flowable.just(x).map(parse))  # flat-map-line
        .test()
        .await_done()
    )
    assert notes(ts) == [
        f"at .map(parse) ({HERE}:{line_of('# flat-map-line')})",
        f"at .flat_map(<lambda>) ({HERE}:{line_of('# flat-map-line')})",
    ]
    ts2 = (
        Flowable.range(0, 5)
        .map(parse)  # before-boundary
        .subscribe_on(schedulers.io())
        .observe_on(schedulers.new_thread())  # boundary-line
        .test()
        .await_done()
    )
    got = notes(ts2)
    assert got[0] == f"at .map(parse) ({HERE}:{line_of('# before-boundary')})"
    assert got[-1] == f"at .observe_on(NewThreadScheduler) ({HERE}:{line_of('# boundary-line')})"


def test_asyncio_map_async(tracing: None) -> None:
    async def lookup(x: int) -> int:
        await asyncio.sleep(0)
        return parse(x)

    async def main() -> list[int]:
        return await Flowable.range(0, 5).map_async(lookup).to_list()  # async-line

    with pytest.raises(Boom) as info:
        asyncio.run(main())
    assert f"at .map_async(lookup) ({HERE}:{line_of('# async-line')})" in info.value.__notes__


def test_library_internal_assemblies_are_not_traced(tracing: None) -> None:
    # buffer_timed / retry build inner operators from other operators: only the user's call is noted
    ts = Flowable.error(Boom("x")).retry(1).test()  # retry-line
    got = notes(ts)
    assert got[-1] == f"at .retry(1) ({HERE}:{line_of('# retry-line')})"
    assert all(HERE in note for note in got)


def test_a_note_is_added_once_when_the_same_error_object_comes_again(tracing: None) -> None:
    err = Boom("same")
    source = Flowable.error(err).map(parse)
    source.test()
    source.test()
    assert len(err.__notes__) == len(set(err.__notes__)) == 2


def test_typed_results_keep_their_interface(tracing: None) -> None:
    connectable = Flowable.range(0, 3).publish()
    ts = connectable.test()
    connectable.connect()
    ts.assert_result(0, 1, 2).assert_no_violations()
    grouped = Flowable.range(0, 4).group_by(lambda x: x % 2).flat_map(lambda g: g.map(lambda x: (g.key, x)))
    grouped.test().assert_result((0, 0), (1, 1), (0, 2), (1, 3)).assert_no_violations()


def test_behaviour_unchanged_under_tracing(tracing: None) -> None:
    ts = Flowable.range(0, 10).map(lambda x: x * 2).filter(lambda x: x % 3 == 0).take(3).test(2)
    ts.assert_values(0, 6).assert_not_complete()
    ts.request(5)
    ts.assert_result(0, 6, 12).assert_no_violations()


def test_environment_variable_switches_it_on_at_import() -> None:
    code = (
        "from rstreams import Flowable, plugins\n"
        "assert plugins.assembly_tracing_enabled()\n"
        "ts = Flowable.just(0).map(lambda x: 1 // x).test()\n"
        "print(ts.errors[0].__notes__)\n"
    )
    env = dict(os.environ, RSTREAMS_ASSEMBLY_TRACING="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "at .map(<lambda>) (<string>:3)" in out.stdout


def test_markers_stay_unwrapped_and_plain_sources_are_traced(tracing: None) -> None:
    from rstreams import metrics

    metrics.set_registry(None)
    try:
        Flowable.range(0, 2).name("a").tag("k", "v").name("b").test().assert_result(0, 1).assert_no_violations()
        assert list(metrics.get_registry().snapshot()) == ["b{k=v}"]
    finally:
        metrics.set_registry(None)
    ts = Flowable.just(0).map(lambda x: 1 // x).checkpoint("cp").test()  # marker-line
    ts.assert_error(ZeroDivisionError).assert_no_violations()
    n = line_of("# marker-line")
    assert ts.errors[0].__notes__ == [f"at .map(<lambda>) ({HERE}:{n})", "checkpoint: cp"]
    ts = Flowable.just(1, 2, 3, 4, 5, 6).map(parse).test()  # just-line
    assert notes(ts)[0] == f"at .map(parse) ({HERE}:{line_of('# just-line')})"
    err = Flowable.from_iterable(list(range(100))).map(parse).test()  # big-input
    assert notes(err) == [f"at .map(parse) ({HERE}:{line_of('# big-input')})"]
    from rstreams.flowable._assembly import AssemblyRecord

    record = AssemblyRecord("Flowable.from_iterable", (list(range(100)),), "/x/etl.py", 7)
    assert record.line == "at Flowable.from_iterable(<list of 100>) (etl.py:7)"  # no repr of a big input


def test_a_deep_concat_with_chain_stays_flat_and_notes_are_capped(tracing: None) -> None:
    n = 2 * sys.getrecursionlimit()
    f: Flowable[int] = Flowable.just(0).hide()
    for _ in range(1, n):
        f = f.concat_with(Flowable.just(1).hide())
    f.count().test().assert_result(n).assert_no_violations()
    base = Flowable.just(1).hide()
    assert base.start_with() is base
    scope: dict[str, Any] = {"g": Flowable.error(Boom("deep"))}
    exec(compile("g = g.hide()\n" * 100, "deep.py", "exec"), scope)  # 100 stages on 100 lines
    got = notes(scope["g"].test())
    assert len(got) == 17 and got[-1] == "at ... (more traced stages: notes stop here)"
    assert got[0].startswith("at Flowable.error(")
