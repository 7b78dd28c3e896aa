"""``to_arrow_batches(schema, batch_size)``: rows (tuples or dicts) into pyarrow RecordBatches;
``to_pandas(columns)``: the whole stream as one pandas DataFrame.

``to_arrow_batches`` is ``buffer(batch_size)`` followed by a conversion (``rows_to_batch``: column
by column, in C), so it fuses with a synchronous upstream and its backpressure is buffer's: a
request of ``n`` batches requests ``n * batch_size`` rows. The schema is a ``pyarrow.Schema``; or
column names (types inferred from the first batch, then fixed); or None for dict rows (names and
types from the first batch). Whatever the schema, a row that does not fit it is an error, never a
dropped value: a tuple of another width, a dict with a key that is not a column, a value of the
wrong type (the error names the column), a None in a non-nullable column. Missing dict keys are
nulls. Inference keeps per-subscription state, so that variant is wrapped in ``defer``.

``to_pandas`` collects like ``to_list`` and builds the DataFrame at completion; it needs pandas
only (pyarrow too for RecordBatch elements).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from .._arrow import check_nulls, require_pandas, require_pyarrow, rows_as_tuples, rows_to_batch

if TYPE_CHECKING:
    from .._flowable import Flowable

__all__ = ["to_arrow_batches", "to_pandas"]

_WHAT: Final = "to_arrow_batches(): the upstream"
_HINT: Final = "pass schema= (a pyarrow.Schema, or the column names) describing the rows"


def _column_error(pa: Any, chunk: list[Any], schema: Any, error: Exception) -> Exception:
    """The conversion failed: find the column whose values do not fit its type and say so."""
    names = schema.names
    for i, field in enumerate(schema):
        values = [
            (x.get(field.name) if isinstance(x, dict) else x[i] if isinstance(x, tuple) else x) for x in chunk
        ]
        try:
            pa.array(values, type=field.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError) as e:
            return TypeError(
                f"to_arrow_batches(): a value of column {field.name!r} does not fit its type {field.type}: {e}; "
                f"{_HINT} (columns: {', '.join(names)})"
            )
    return error


def _infer(pa: Any, chunk: list[Any], names: list[str] | None) -> Any:
    """The schema of the first batch: its columns' inferred types (nullable)."""
    if names is None:
        if not all(isinstance(x, dict) for x in chunk):
            bad = next(x for x in chunk if not isinstance(x, dict))
            raise TypeError(
                f"to_arrow_batches(): without a schema the rows must be dicts (their keys name the "
                f"columns), got {type(bad).__name__} {bad!r}; {_HINT}"
            )
        names = list(dict.fromkeys(k for x in chunk for k in x))  # every key of the batch, in order
        bad_keys = [k for k in names if not isinstance(k, str)]
        if bad_keys:
            raise TypeError(f"to_arrow_batches(): column names must be str, got keys {bad_keys!r}")
        columns = [[x.get(n) for x in chunk] for n in names]
    else:
        rows = rows_as_tuples(chunk, names, _WHAT, _HINT, strict=True, schema="the schema")
        columns = [list(c) for c in zip(*rows, strict=True)]
    arrays = []
    for n, c in zip(names, columns, strict=True):
        try:
            arrays.append(pa.array(c))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise TypeError(f"to_arrow_batches(): the values of column {n!r} have no common Arrow type: {e}") from e
    return pa.schema([pa.field(n, a.type) for n, a in zip(names, arrays, strict=True)])


class _Converter:
    """One subscription's chunk -> RecordBatch conversion (holds the inferred schema)."""

    __slots__ = ("_pa", "_schema", "_names", "_check_nulls")

    def __init__(self, pa: Any, schema: Any, names: list[str] | None) -> None:
        self._pa = pa
        self._schema = schema
        self._names = names
        self._check_nulls = schema is not None and not all(f.nullable for f in schema)

    def __call__(self, chunk: list[Any]) -> Any:
        pa = self._pa
        schema = self._schema
        if schema is None:
            # inference: the first batch fixes the schema for the rest of this subscription
            schema = self._schema = _infer(pa, chunk, self._names)
        try:
            batch = rows_to_batch(chunk, schema, pa, strict=True, what=_WHAT, hint=_HINT)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError) as e:
            raise _column_error(pa, chunk, schema, e) from e
        if self._check_nulls:
            check_nulls(batch, schema, what=_WHAT)
        return batch


def to_arrow_batches(source: Flowable[Any], schema: Any, batch_size: int) -> Flowable[Any]:
    pa = require_pyarrow("Flowable.to_arrow_batches()")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int):
        raise TypeError(f"to_arrow_batches(): batch_size must be a positive int, got {batch_size!r}")
    if batch_size <= 0:
        raise ValueError(f"to_arrow_batches(): batch_size must be >= 1, got {batch_size}")
    names: list[str] | None = None
    if schema is None:
        pass
    elif isinstance(schema, pa.Schema):
        if len(set(schema.names)) != len(schema.names):
            raise ValueError(f"to_arrow_batches(): the schema has duplicate column names: {schema.names}")
        return source.buffer(batch_size).map(_Converter(pa, schema, None))
    elif isinstance(schema, Sequence) and not isinstance(schema, str | bytes) and all(
        isinstance(n, str) for n in schema
    ):
        names = list(schema)
        if not names or len(set(names)) != len(names):
            raise ValueError(f"to_arrow_batches(): column names must be unique and at least one, got {names!r}")
    else:
        raise TypeError(
            "to_arrow_batches(): schema must be a pyarrow.Schema, a list of column names, or None "
            f"(dict rows, types inferred), got {type(schema).__name__} {schema!r}"
        )
    from .._flowable import Flowable

    inferred_names = names
    return Flowable.defer(lambda: source.buffer(batch_size).map(_Converter(pa, None, inferred_names)))


def _frame(items: list[Any], columns: list[Any] | None) -> Any:
    pd = require_pandas("Flowable.to_pandas()")
    if not items:
        return pd.DataFrame(columns=columns)
    first = items[0]
    mod = type(first).__module__.split(".")[0]
    if mod == "pyarrow":
        pa = require_pyarrow("Flowable.to_pandas()")
        if not all(isinstance(x, pa.RecordBatch | pa.Table) for x in items):
            raise TypeError("to_pandas(): the elements mix pyarrow batches with other values")
        tables = [x if isinstance(x, pa.Table) else pa.Table.from_batches([x]) for x in items]
        df = pa.concat_tables(tables).to_pandas()
        return df if columns is None else df[columns]
    if isinstance(first, pd.DataFrame):
        if not all(isinstance(x, pd.DataFrame) for x in items):
            raise TypeError("to_pandas(): the elements mix DataFrames with other values")
        df = pd.concat(items, ignore_index=True)
        return df if columns is None else df[columns]
    if all(isinstance(x, dict) for x in items):
        if columns is not None:
            known = set(columns)
            for x in items:
                extra = set(x).difference(known)
                if extra:
                    raise ValueError(
                        f"to_pandas(): the element {x!r} has keys {sorted(map(str, extra))} that are not "
                        f"in columns={columns!r} (they would be dropped)"
                    )
        return pd.DataFrame.from_records(items, columns=columns)
    if any(isinstance(x, dict) for x in items):
        raise TypeError("to_pandas(): the elements mix dicts with tuples or values")
    rows = [x if isinstance(x, tuple) else (x,) for x in items]
    width = len(rows[0])
    for r in rows:
        if len(r) != width:
            raise ValueError(f"to_pandas(): rows of different widths: {rows[0]!r} and {r!r}")
    if columns is not None and len(columns) != width:
        raise ValueError(f"to_pandas(): columns={columns!r} names {len(columns)} columns but the rows have {width}")
    return pd.DataFrame.from_records(rows, columns=columns)


def to_pandas(source: Flowable[Any], columns: Sequence[Any] | None) -> Flowable[Any]:
    require_pandas("Flowable.to_pandas()")
    if columns is not None:
        if isinstance(columns, str | bytes) or not isinstance(columns, Sequence):
            raise TypeError(f"to_pandas(): columns must be a list of column names or None, got {columns!r}")
        if len(set(columns)) != len(columns):
            raise ValueError(f"to_pandas(): duplicate column names in {list(columns)!r}")
    cols = None if columns is None else list(columns)
    return source.to_list().map(lambda items: _frame(items, cols))
