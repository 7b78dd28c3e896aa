"""``from_arrow(data, as_, batch_size)`` and ``from_pandas(df, as_, batch_size)``: Arrow record
batches and pandas DataFrames as Flowables, outside Spark (pyarrow and pandas are optional: each is
imported when these are called, and missing, an ImportError names the extra to install).

Both are fusion sources (``_fused.py``): the root iterator chains the rows of one record batch
after another (``batch_to_rows``: columns converted with ``to_pylist`` and zipped, in C), so a
request of ``n`` is one ``islice`` and batch-taking consumers (``count``, ``to_list``, ``reduce``)
receive lists of rows, not one call per row. A batch is converted only when its first row is
pulled: memory holds at most one converted slice (``batch_size`` rows, default 65,536) beyond what
the downstream keeps.

An in-memory Table, RecordBatch, list of batches or DataFrame knows its element count: the stream
completes with its last element, and any number of subscriptions each get a full pass. A
``RecordBatchReader`` or an iterator of batches is one-shot, as ``from_iterable(iterator)``: a
second subscription gets ``OneShotIteratorError``; it is looked ahead one row (the fused driver's
``hasNext()``, to complete with the last row), so its next batch may be read, and converted,
before it is requested. Empty batches are skipped in every mode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import chain, repeat
from typing import Any, Final, Literal, TypeVar

from ..._internal.arguments import positive_int_or_none
from .._arrow import batch_to_dicts, batch_to_rows, require_pandas, require_pyarrow
from .._flowable import Flowable
from .._fused import FusedFlowable, Fusion, sized
from ._basic import _OneShot

__all__ = ["from_arrow", "from_pandas"]

T = TypeVar("T")

#: Rows converted at once from a longer batch (``batch_size=None``): bounds the memory of a
#: converted slice while keeping the per-batch overhead (a few microseconds) negligible.
ROW_SLICE: Final = 65_536

_ARROW_AS: Final = ("rows", "dicts", "batches")
_PANDAS_AS: Final = ("rows", "dicts", "frames")


def _check_unique(where: str, names: list[Any]) -> None:
    """As dicts, two columns of one name would become one key: a dropped column."""
    seen: set[Any] = set()
    twice: set[str] = set()
    for n in names:
        if n in seen:
            twice.add(str(n))
        seen.add(n)
    dup = sorted(twice)
    if dup:
        raise ValueError(
            f"{where}: as_='dicts' needs unique column names, but {dup} appear more than once "
            "(one would overwrite the other); rename them, or use as_='rows'"
        )


def _slices(batch: Any, size: int | None) -> Iterator[Any]:
    """``batch`` cut into zero-copy slices of at most ``size`` rows (itself when it fits)."""
    n = batch.num_rows
    if size is None or n <= size:
        if n:
            yield batch
        return
    for i in range(0, n, size):
        yield batch.slice(i, size)


def _what(obj: object) -> str:
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}" if t.__module__ != "builtins" else t.__qualname__


def _checked_batches(items: Iterable[Any], pa: Any, size: int | None, unique: bool) -> Iterator[Any]:
    """The record batches of ``items`` (batches or Tables), sliced; anything else is a TypeError
    naming what it was (signalled as ``on_error``, after the rows before it)."""
    for b in items:
        if isinstance(b, pa.RecordBatch):
            parts: Iterable[Any] = (b,)
        elif isinstance(b, pa.Table):
            parts = b.to_batches(max_chunksize=size)
        else:
            raise TypeError(
                f"from_arrow(): the iterable yielded a {_what(b)}, not a pyarrow.RecordBatch or pyarrow.Table"
            )
        for p in parts:
            if unique:
                _check_unique("from_arrow()", p.schema.names)
            yield from _slices(p, size)


def from_arrow(data: Any, as_: Literal["rows", "dicts", "batches"], batch_size: int | None) -> Flowable[Any]:
    pa = require_pyarrow("Flowable.from_arrow()")
    if as_ not in _ARROW_AS:
        raise ValueError(f"from_arrow(): as_ must be 'rows', 'dicts' or 'batches', got {as_!r}")
    size = positive_int_or_none("from_arrow", "batch_size", batch_size)
    convert: Callable[[Any], list[Any]] | None = (
        batch_to_rows if as_ == "rows" else batch_to_dicts if as_ == "dicts" else None
    )
    if convert is not None and size is None:
        size = ROW_SLICE
    unique = as_ == "dicts"
    batches: list[Any] | None = None
    if isinstance(data, pa.Table):
        if unique:
            _check_unique("from_arrow()", data.schema.names)
        batches = [b for b in data.to_batches(max_chunksize=size) if b.num_rows]
    elif isinstance(data, pa.RecordBatch):
        if unique:
            _check_unique("from_arrow()", data.schema.names)
        batches = list(_slices(data, size))
    elif isinstance(data, list | tuple):
        batches = list(_checked_batches(data, pa, size, unique))  # bad elements fail here, at assembly
    elif isinstance(data, pa.RecordBatchReader) or (
        hasattr(data, "__iter__") and hasattr(type(data), "__next__")
    ):
        if isinstance(data, pa.RecordBatchReader) and unique:
            _check_unique("from_arrow()", data.schema.names)
        one_shot = _OneShot(iter(data))  # a reader or an iterator: one pass, for the first subscriber

        def stream() -> Iterator[Any]:
            parts = _checked_batches(one_shot(), pa, size, unique)
            return parts if convert is None else chain.from_iterable(map(convert, parts))

        return FusedFlowable(Fusion(stream, None, (), ("from_arrow",), none_free=True))
    else:
        hint = ""
        if type(data).__module__.split(".")[0] == "pandas":
            hint = "; for a pandas DataFrame use Flowable.from_pandas(df)"
        raise TypeError(
            "from_arrow(): expected a pyarrow.Table, RecordBatch, RecordBatchReader, or a list or "
            f"iterator of RecordBatches, got {_what(data)}{hint}"
        )
    frozen = tuple(batches)
    if convert is None:
        return FusedFlowable(Fusion(frozen.__iter__, sized(len(frozen)), (), ("from_arrow",), none_free=True))
    rows = sum(b.num_rows for b in frozen)
    conv = convert
    return FusedFlowable(
        Fusion(lambda: chain.from_iterable(map(conv, frozen)), sized(rows), (), ("from_arrow",), none_free=True)
    )


def from_pandas(df: Any, as_: Literal["rows", "dicts", "frames"], batch_size: int | None) -> Flowable[Any]:
    pd = require_pandas("Flowable.from_pandas()")
    if not isinstance(df, pd.DataFrame):
        hint = ""
        if type(df).__module__.split(".")[0] == "pyarrow":
            hint = "; for pyarrow data use Flowable.from_arrow()"
        elif isinstance(df, pd.Series):
            hint = "; for a Series use Flowable.from_iterable(series) or series.to_frame()"
        raise TypeError(f"from_pandas(): expected a pandas.DataFrame, got {_what(df)}{hint}")
    if as_ not in _PANDAS_AS:
        raise ValueError(f"from_pandas(): as_ must be 'rows', 'dicts' or 'frames', got {as_!r}")
    size = positive_int_or_none("from_pandas", "batch_size", batch_size)
    n = len(df)
    if as_ == "frames":
        k = size or ROW_SLICE
        starts = range(0, n, k)
        return FusedFlowable(
            Fusion(lambda: (df.iloc[i : i + k] for i in starts), sized(len(starts)), (), ("from_pandas",), none_free=True)
        )
    if size is not None:
        raise ValueError("from_pandas(): batch_size applies to as_='frames' only")
    # itertuples(name=None) zips the columns' iterators: Python scalars for numpy columns, plain
    # tuples, one C-level step per row
    if as_ == "rows":
        return FusedFlowable(
            Fusion(lambda: df.itertuples(index=False, name=None), sized(n), (), ("from_pandas",), none_free=True)
        )
    cols = list(df.columns)
    _check_unique("from_pandas()", cols)

    def dicts() -> Iterator[dict[Any, Any]]:
        return map(dict, map(zip, repeat(cols), df.itertuples(index=False, name=None)))

    return FusedFlowable(Fusion(dicts, sized(n), (), ("from_pandas",), none_free=True))
