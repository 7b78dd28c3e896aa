"""Flowable.from_arrow / from_pandas (fused row sources) and to_arrow_batches / to_pandas, outside Spark."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow", reason="pyarrow is optional (pip install pyarrow, or rstreams[spark])")
pd = pytest.importorskip("pandas", reason="pandas is optional (pip install pandas, or rstreams[spark])")

from operators.harness import Boom, check_raising, check_scenarios, run_one_by_one  # noqa: E402
from rstreams import Flowable, plugins  # noqa: E402
from rstreams.errors import OneShotIteratorError  # noqa: E402
from rstreams.flowable._arrow import batch_to_rows, require_pyarrow  # noqa: E402
from rstreams.testing import TestSubscriber  # noqa: E402


def _table(n: int = 5) -> Any:
    return pa.table({"id": list(range(n)), "name": [f"n{i}" for i in range(n)]})


def _rows(n: int = 5) -> list[tuple[int, str]]:
    return [(i, f"n{i}") for i in range(n)]


SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])

# ---------------------------------------------------------------------------------------------
# from_arrow: the shapes of input


def test_from_arrow_table_rows_dicts_batches() -> None:
    t = _table(3)
    Flowable.from_arrow(t).test().assert_result(*_rows(3)).assert_no_violations()
    Flowable.from_arrow(t, as_="dicts").test().assert_result(
        *({"id": i, "name": f"n{i}"} for i in range(3))
    ).assert_no_violations()
    ts = Flowable.from_arrow(t, as_="batches").test().assert_complete().assert_no_violations()
    assert pa.Table.from_batches(ts.values).equals(t)


def test_from_arrow_of_a_batch_a_list_a_reader_and_an_iterator() -> None:
    t = _table(6)
    batches = t.to_batches(max_chunksize=2)
    assert len(batches) == 3
    Flowable.from_arrow(batches[0]).test().assert_result(*_rows(2)).assert_no_violations()
    Flowable.from_arrow(batches).test().assert_result(*_rows(6)).assert_no_violations()
    Flowable.from_arrow(tuple(batches)).test().assert_result(*_rows(6)).assert_no_violations()
    Flowable.from_arrow([t, batches[0]]).test().assert_result(*_rows(6), *_rows(2)).assert_no_violations()
    reader = pa.RecordBatchReader.from_batches(t.schema, batches)
    Flowable.from_arrow(reader).test().assert_result(*_rows(6)).assert_no_violations()
    Flowable.from_arrow(iter(batches)).test().assert_result(*_rows(6)).assert_no_violations()
    Flowable.from_arrow(b for b in batches).test().assert_result(*_rows(6)).assert_no_violations()


def test_in_memory_data_can_be_subscribed_again_a_reader_cannot() -> None:
    f = Flowable.from_arrow(_table(3))
    f.test().assert_result(*_rows(3)).assert_no_violations()
    f.test().assert_result(*_rows(3)).assert_no_violations()
    t = _table(3)
    r = Flowable.from_arrow(pa.RecordBatchReader.from_batches(t.schema, t.to_batches()))
    r.test().assert_result(*_rows(3)).assert_no_violations()
    r.test().assert_failure(OneShotIteratorError).assert_no_violations()


def test_map_columns_are_dicts_and_structs_dicts_as_in_spark_rows() -> None:
    t = pa.table(
        {
            "m": pa.array([[("a", 1)], None], pa.map_(pa.string(), pa.int64())),
            "s": pa.array([{"x": 1}, {"x": 2}], pa.struct([("x", pa.int64())])),
        }
    )
    Flowable.from_arrow(t).test().assert_result(({"a": 1}, {"x": 1}), (None, {"x": 2})).assert_no_violations()
    Flowable.from_arrow(t, as_="dicts").test().assert_result(
        {"m": {"a": 1}, "s": {"x": 1}}, {"m": None, "s": {"x": 2}}
    ).assert_no_violations()


def test_empty_batches_are_skipped_and_an_empty_table_completes() -> None:
    empty = pa.RecordBatch.from_pydict({"id": pa.array([], pa.int64())})
    one = pa.RecordBatch.from_pydict({"id": [7]})
    Flowable.from_arrow([empty, one, empty]).test().assert_result((7,)).assert_no_violations()
    Flowable.from_arrow([empty, one, empty], as_="batches").test().assert_result(one).assert_no_violations()
    Flowable.from_arrow(pa.table({"id": pa.array([], pa.int64())})).test().assert_result().assert_no_violations()
    Flowable.from_arrow(iter([empty])).test().assert_result().assert_no_violations()


def test_batch_size_slices_batches_without_merging() -> None:
    t = _table(5)
    ts = Flowable.from_arrow(t, as_="batches", batch_size=2).test().assert_complete().assert_no_violations()
    assert [b.num_rows for b in ts.values] == [2, 2, 1]
    small = t.to_batches(max_chunksize=1)
    ts2 = Flowable.from_arrow(small, as_="batches", batch_size=3).test().assert_complete()
    assert [b.num_rows for b in ts2.values] == [1] * 5  # never merged
    # rows: batch_size is the conversion slice; same rows either way
    Flowable.from_arrow(t, batch_size=1).test().assert_result(*_rows(5)).assert_no_violations()


def test_rows_are_converted_one_slice_at_a_time() -> None:
    t = pa.table({"id": list(range(100))})
    converted: list[int] = []
    import rstreams.flowable.sources._from_arrow as mod

    real = mod.batch_to_rows

    def spy(batch: Any) -> list[Any]:
        converted.append(batch.num_rows)
        return real(batch)

    mod.batch_to_rows = spy
    try:
        ts: TestSubscriber[Any] = Flowable.from_arrow(t, batch_size=10).test(0)
        assert converted == []  # nothing converted before a request
        ts.request(3)
        assert converted == [10]
        ts.request(10)
        assert converted == [10, 10]
        ts.cancel()
        ts.assert_values(*((i,) for i in range(13))).assert_no_violations()
    finally:
        mod.batch_to_rows = real


# ---------------------------------------------------------------------------------------------
# from_arrow: the scenarios (backpressure one by one, cancel, fused and hidden alike)


@pytest.mark.parametrize("as_", ["rows", "dicts", "batches"])
def test_from_arrow_one_by_one_and_hidden_give_the_same_signals(as_: str) -> None:
    t = _table(7)
    src = Flowable.from_arrow(t, as_=as_, batch_size=2)  # type: ignore[arg-type]
    fused = src.test().assert_complete().assert_no_violations().values
    hidden = src.hide().test().assert_complete().assert_no_violations().values
    one = run_one_by_one(src).assert_complete().assert_no_violations().values
    one_hidden = run_one_by_one(src.hide()).assert_complete().assert_no_violations().values
    assert fused == hidden == one == one_hidden
    assert len(fused) == (4 if as_ == "batches" else 7)


def test_operators_downstream_of_from_arrow() -> None:
    out = Flowable.from_arrow(_table(10)).map(lambda r: r[0]).filter(lambda i: i % 2 == 0).to_list().test()
    out.assert_result([0, 2, 4, 6, 8]).assert_no_violations()
    Flowable.from_arrow(_table(1000), batch_size=64).count().test().assert_result(1000).assert_no_violations()


def test_a_bad_element_in_an_iterator_is_an_error_after_the_rows_before_it() -> None:
    t = _table(2)

    def gen() -> Any:
        yield from t.to_batches()
        yield {"id": [1]}

    ts = Flowable.from_arrow(gen()).test()
    ts.assert_failure(TypeError, *_rows(2), match=r"yielded a dict, not a pyarrow.RecordBatch").assert_no_violations()


def test_an_iterator_that_raises_is_an_error_after_the_rows_before_it() -> None:
    t = _table(2)

    def gen() -> Any:
        yield from t.to_batches()
        raise Boom("reader failed")

    Flowable.from_arrow(gen()).test().assert_failure(Boom, *_rows(2)).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# from_arrow: bad arguments, at assembly


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"id": [1]}, r"from_arrow\(\): expected a pyarrow.Table.*got dict"),
        ("abc", r"got str"),
        (42, r"got int"),
        (None, r"got NoneType"),
        ([{"id": 1}], r"yielded a dict"),
        ([pa.array([1])], r"yielded a pyarrow.lib.Int64Array"),
    ],
)
def test_from_arrow_refuses_what_is_not_arrow_data(data: Any, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        Flowable.from_arrow(data)


def test_from_arrow_of_a_dataframe_points_to_from_pandas() -> None:
    with pytest.raises(TypeError, match=r"got pandas.core.frame.DataFrame; for a pandas DataFrame use Flowable.from_pandas"):
        Flowable.from_arrow(pd.DataFrame({"a": [1]}))


def test_from_arrow_bad_options() -> None:
    with pytest.raises(ValueError, match="as_ must be 'rows', 'dicts' or 'batches', got 'tuples'"):
        Flowable.from_arrow(_table(), as_="tuples")  # type: ignore[arg-type]
    for bad in (0, -1):
        with pytest.raises(ValueError, match="batch_size must be >= 1"):
            Flowable.from_arrow(_table(), batch_size=bad)
    for wrong in (1.5, True, "10"):
        with pytest.raises(TypeError, match="batch_size must be a positive int"):
            Flowable.from_arrow(_table(), batch_size=wrong)  # type: ignore[arg-type]


def test_dicts_refuse_duplicate_column_names_rather_than_drop_one() -> None:
    t = pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["a", "a"])
    with pytest.raises(ValueError, match=r"unique column names, but \['a'\] appear more than once"):
        Flowable.from_arrow(t, as_="dicts")
    Flowable.from_arrow(t).test().assert_result((1, 2)).assert_no_violations()  # rows keep both


# ---------------------------------------------------------------------------------------------
# from_pandas


def test_from_pandas_rows_dicts_frames() -> None:
    df = pd.DataFrame({"id": [1, 2, 3], "x": [0.5, 1.5, 2.5]}, index=[10, 20, 30])
    ts = Flowable.from_pandas(df).test().assert_result((1, 0.5), (2, 1.5), (3, 2.5)).assert_no_violations()
    assert all(type(v) is int for v, _ in ts.values)  # Python scalars, not numpy
    Flowable.from_pandas(df, as_="dicts").test().assert_result(
        {"id": 1, "x": 0.5}, {"id": 2, "x": 1.5}, {"id": 3, "x": 2.5}
    ).assert_no_violations()
    frames = Flowable.from_pandas(df, as_="frames", batch_size=2).test().assert_complete().assert_no_violations()
    assert [len(f) for f in frames.values] == [2, 1]
    assert pd.concat(frames.values).equals(df)


def test_from_pandas_backpressure_cancel_and_hidden() -> None:
    df = pd.DataFrame({"id": range(6)})
    src = Flowable.from_pandas(df)
    want = [(i,) for i in range(6)]
    assert run_one_by_one(src).assert_complete().assert_no_violations().values == want
    assert run_one_by_one(src.hide()).assert_complete().assert_no_violations().values == want
    ts: TestSubscriber[Any] = src.test(2)
    ts.cancel()
    ts.request(3)
    ts.assert_values((0,), (1,)).assert_not_complete().assert_no_violations()


def test_from_pandas_bad_input() -> None:
    with pytest.raises(TypeError, match=r"expected a pandas.DataFrame, got pyarrow.lib.Table; for pyarrow data use Flowable.from_arrow"):
        Flowable.from_pandas(_table())
    with pytest.raises(TypeError, match=r"got pandas.core.series.Series; for a Series"):
        Flowable.from_pandas(pd.Series([1]))
    with pytest.raises(TypeError, match="got list"):
        Flowable.from_pandas([(1, 2)])
    with pytest.raises(ValueError, match="as_ must be 'rows', 'dicts' or 'frames'"):
        Flowable.from_pandas(pd.DataFrame({"a": [1]}), as_="batches")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_size applies to as_='frames' only"):
        Flowable.from_pandas(pd.DataFrame({"a": [1]}), batch_size=2)
    dup = pd.DataFrame([[1, 2]], columns=["a", "a"])
    with pytest.raises(ValueError, match="appear more than once"):
        Flowable.from_pandas(dup, as_="dicts")


# ---------------------------------------------------------------------------------------------
# to_arrow_batches


def _batches(rows: list[Any], size: int, schema: Any = SCHEMA) -> list[Any]:
    return [
        pa.RecordBatch.from_pylist(
            [r if isinstance(r, dict) else dict(zip(schema.names, r, strict=True)) for r in rows[i : i + size]],
            schema=schema,
        )
        for i in range(0, len(rows), size)
    ]


def test_to_arrow_batches_scenarios_fused_hidden_one_by_one_cancel_error() -> None:
    rows = _rows(7)
    want = _batches(rows, 3)
    assert [b.num_rows for b in want] == [3, 3, 1]
    check_scenarios(lambda f: f.to_arrow_batches(SCHEMA, batch_size=3), rows, want)
    # an upstream error discards the incomplete batch (as buffer(n) does)
    check_scenarios(
        lambda f: f.to_arrow_batches(SCHEMA, batch_size=3),
        rows,
        want,
        on_error_expected=lambda d: (want[:2], Boom),
    )


def test_to_arrow_batches_of_dicts_with_a_schema_and_missing_keys_as_nulls() -> None:
    rows = [{"id": 1, "name": "a"}, {"id": 2}]
    ts = Flowable.from_iterable(rows).to_arrow_batches(SCHEMA, batch_size=10).test().assert_complete()
    ts.assert_no_violations()
    assert ts.values[0].to_pylist() == [{"id": 1, "name": "a"}, {"id": 2, "name": None}]


def test_to_arrow_batches_infers_the_schema_from_dicts_then_keeps_it() -> None:
    rows = [{"a": 1}, {"a": 2, "b": "x"}, {"a": 3, "b": "y"}]
    ts = Flowable.from_iterable(rows).to_arrow_batches(batch_size=2).test().assert_complete().assert_no_violations()
    assert [b.schema for b in ts.values] == [pa.schema([("a", pa.int64()), ("b", pa.string())])] * 2
    assert pa.Table.from_batches(ts.values).to_pylist() == [{"a": 1, "b": None}, {"a": 2, "b": "x"}, {"a": 3, "b": "y"}]
    # per subscription: a second subscriber infers afresh
    f = Flowable.defer(lambda: Flowable.just({"a": 1})).to_arrow_batches()
    assert f.test().values[0].schema == pa.schema([("a", pa.int64())])
    assert f.test().values[0].schema == pa.schema([("a", pa.int64())])


def test_to_arrow_batches_with_column_names_infers_types() -> None:
    ts = Flowable.just((1, "a"), (2, "b")).to_arrow_batches(["id", "name"]).test().assert_complete()
    ts.assert_no_violations()
    assert ts.values[0].schema == SCHEMA
    one = pa.schema([("v", pa.float64())])
    ts2 = Flowable.just(0.5, 1.5).to_arrow_batches(one).test().assert_complete().assert_no_violations()
    assert ts2.values[0].column(0).to_pylist() == [0.5, 1.5]  # single values for a one-column schema


def test_schema_mismatch_is_an_error_never_a_dropped_column() -> None:
    # a dict key that is not a column
    ts = Flowable.just({"id": 1, "name": "a", "extra": 9}).to_arrow_batches(SCHEMA).test()
    ts.assert_failure(ValueError, match=r"keys \['extra'\] are not columns of the output schema").assert_no_violations()
    # a key that appears after inference fixed the schema
    ts = Flowable.just({"a": 1}, {"a": 2, "late": 3}).to_arrow_batches(batch_size=1).test()
    first = pa.RecordBatch.from_pylist([{"a": 1}])
    ts.assert_failure(ValueError, first, match=r"keys \['late'\]").assert_no_violations()
    # a tuple of another width
    ts = Flowable.just((1, "a", "surplus")).to_arrow_batches(SCHEMA).test()
    ts.assert_failure(ValueError, match=r"\(3 values\) but the output schema has 2 columns \(id, name\)")
    ts.assert_no_violations()
    ts = Flowable.just((1,)).to_arrow_batches(["id", "name"]).test()
    ts.assert_failure(ValueError, match=r"\(1 values\) but the schema has 2 columns").assert_no_violations()
    # a value of the wrong type: the column is named
    ts = Flowable.just((1, "a"), ("x", "b")).to_arrow_batches(SCHEMA).test()
    ts.assert_failure(TypeError, match=r"column 'id' does not fit its type int64").assert_no_violations()
    ts = Flowable.just({"id": 1, "name": 5}).to_arrow_batches(SCHEMA).test()
    ts.assert_failure(TypeError, match=r"column 'name'").assert_no_violations()
    # a None in a non-nullable column
    strict = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    ts = Flowable.just((1,), {"id": None}).to_arrow_batches(strict).test()
    ts.assert_failure(ValueError, match=r"None for the non-nullable column 'id'").assert_no_violations()
    # tuples without a schema: no names to give the columns
    ts = Flowable.just((1, 2)).to_arrow_batches().test()
    ts.assert_failure(TypeError, match=r"without a schema the rows must be dicts").assert_no_violations()


def test_to_arrow_batches_cancels_upstream_on_a_conversion_error() -> None:
    cancelled: list[bool] = []
    src = Flowable.just(("x", "a"), (1, "b")).hide().do_on_cancel(lambda: cancelled.append(True))
    src.to_arrow_batches(SCHEMA, batch_size=1).test().assert_failure(TypeError).assert_no_violations()
    assert cancelled


def test_to_arrow_batches_raising_upstream_function() -> None:
    def boom(x: Any) -> Any:
        raise Boom("user function")

    check_raising(lambda f: f.map(boom).to_arrow_batches(SCHEMA), _rows(3))


def test_to_arrow_batches_bad_arguments() -> None:
    f = Flowable.just((1, "a"))
    with pytest.raises(TypeError, match=r"schema must be a pyarrow.Schema, a list of column names, or None.*got str"):
        f.to_arrow_batches("id long")
    with pytest.raises(TypeError, match="got dict"):
        f.to_arrow_batches({"id": pa.int64()})
    with pytest.raises(ValueError, match="unique and at least one"):
        f.to_arrow_batches(["a", "a"])
    with pytest.raises(ValueError, match="duplicate column names"):
        f.to_arrow_batches(pa.schema([("a", pa.int64()), ("a", pa.int64())]))
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        f.to_arrow_batches(SCHEMA, batch_size=0)
    with pytest.raises(TypeError, match="batch_size must be a positive int"):
        f.to_arrow_batches(SCHEMA, batch_size=2.0)  # type: ignore[arg-type]


def test_round_trip_arrow_rows_batches() -> None:
    t = _table(50)
    out = Flowable.from_arrow(t).to_arrow_batches(t.schema, batch_size=16).to_list().test().assert_complete()
    assert pa.Table.from_batches(out.values[0]).equals(t)


# ---------------------------------------------------------------------------------------------
# to_pandas


def test_to_pandas_from_tuples_dicts_batches_and_frames() -> None:
    df = Flowable.just((1, "a"), (2, "b")).to_pandas(["id", "name"]).test().assert_complete().assert_no_violations().values[0]
    assert df.to_dict("list") == {"id": [1, 2], "name": ["a", "b"]}
    df2 = Flowable.just({"id": 1}, {"id": 2, "name": "b"}).to_pandas().blocking_first()
    assert list(df2.columns) == ["id", "name"] and df2["id"].tolist() == [1, 2]
    df3 = Flowable.from_arrow(_table(5)).to_arrow_batches(SCHEMA, batch_size=2).to_pandas().blocking_first()
    assert df3.equals(_table(5).to_pandas())
    src = pd.DataFrame({"id": range(5)})
    df4 = Flowable.from_pandas(src, as_="frames", batch_size=2).to_pandas().blocking_first()
    assert df4.equals(src)
    empty = Flowable.empty().to_pandas(["a"]).blocking_first()
    assert list(empty.columns) == ["a"] and len(empty) == 0


def test_to_pandas_backpressure_and_errors() -> None:
    ts: TestSubscriber[Any] = Flowable.just((1,), (2,)).to_pandas().test(0)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_value_count(1).assert_complete().assert_no_violations()
    Flowable.error(Boom("x")).to_pandas().test().assert_failure(Boom).assert_no_violations()
    Flowable.just({"a": 1, "b": 2}).to_pandas(["a"]).test().assert_failure(
        ValueError, match=r"keys \['b'\] that are not in columns"
    ).assert_no_violations()
    Flowable.just((1,), {"a": 1}).to_pandas().test().assert_failure(TypeError, match="mix").assert_no_violations()
    Flowable.just((1,), (1, 2)).to_pandas().test().assert_failure(ValueError, match="different widths").assert_no_violations()
    with pytest.raises(TypeError, match="columns must be a list of column names"):
        Flowable.just(1).to_pandas("abc")
    with pytest.raises(ValueError, match="duplicate column names"):
        Flowable.just(1).to_pandas(["a", "a"])


# ---------------------------------------------------------------------------------------------
# optional dependencies


def test_import_rstreams_and_the_interop_facade_import_no_pyarrow_or_pandas() -> None:
    code = (
        "import sys, rstreams\n"
        "from rstreams import Flowable\n"
        "Flowable.just(1).map(str).test()\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('pyarrow', 'pandas', 'reactivex')]\n"
        "assert not heavy, heavy\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_missing_pyarrow_is_an_import_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # makes `import pyarrow` fail
    with pytest.raises(ImportError, match=r"Flowable.from_arrow\(\) needs pyarrow.*pip install pyarrow \(or rstreams\[spark\]"):
        require_pyarrow("Flowable.from_arrow()")
    with pytest.raises(ImportError, match=r"to_arrow_batches\(\) needs pyarrow"):
        Flowable.just((1,)).to_arrow_batches()
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"Flowable.to_pandas\(\) needs pandas.*rstreams\[spark\]"):
        Flowable.just((1,)).to_pandas()


def test_batch_to_rows_is_shared_with_the_spark_source() -> None:
    assert batch_to_rows(pa.RecordBatch.from_pydict({"a": [1, 2], "b": ["x", "y"]})) == [(1, "x"), (2, "y")]
    with plugins.collect_errors() as errors:
        Flowable.from_arrow(_table(2)).test().assert_result(*_rows(2)).assert_no_violations()
    assert not errors


def test_a_reader_is_read_one_batch_ahead_to_complete_with_its_last_row() -> None:
    t = pa.table({"a": list(range(4))})
    pulled: list[int] = []

    def gen() -> Any:
        for b in t.to_batches(max_chunksize=2):
            pulled.append(b.num_rows)
            yield b

    ts: TestSubscriber[Any] = Flowable.from_arrow(gen()).test(0)
    assert pulled == [2]  # hasNext() at subscription
    ts.request(2)
    assert pulled == [2, 2]
    ts.request(2)
    ts.assert_result((0,), (1,), (2,), (3,)).assert_no_violations()  # completes without another request


@pytest.mark.parametrize("as_", ["rows", "dicts", "batches"])
def test_a_reader_one_by_one_and_hidden_give_the_same_signals(as_: str) -> None:
    t = _table(7)

    def reader() -> Any:
        return pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=3))

    runs = [
        Flowable.from_arrow(reader(), as_=as_).test(),  # type: ignore[arg-type]
        Flowable.from_arrow(reader(), as_=as_).hide().test(),  # type: ignore[arg-type]
        run_one_by_one(Flowable.from_arrow(reader(), as_=as_)),  # type: ignore[arg-type]
        run_one_by_one(Flowable.from_arrow(reader(), as_=as_).hide()),  # type: ignore[arg-type]
    ]
    for ts in runs:
        ts.assert_complete().assert_no_violations()
    assert all(ts.values == runs[0].values for ts in runs)
    assert len(runs[0].values) == (3 if as_ == "batches" else 7)
