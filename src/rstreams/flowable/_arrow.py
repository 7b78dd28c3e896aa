"""Pure-Arrow conversions shared by ``Flowable.from_arrow``/``to_arrow_batches`` and the Spark
bridges (``rstreams.spark``): record batches to row tuples or dicts, rows (tuples or dicts) to a
record batch, and the optional-dependency checks.

Nothing here imports pyarrow or pandas at module import time: each function imports them when
called (``import rstreams`` stays light). ``require_pyarrow(where)`` / ``require_pandas(where)``
return the module or raise an ImportError naming the extra that installs it.

Rows are converted column by column (``Array.to_pylist`` then ``zip``: the loops run in C), not
row by row: a few hundred nanoseconds per row for flat schemas.
"""

from __future__ import annotations

import importlib
from typing import Any, Final

__all__ = [
    "batch_to_rows",
    "batch_to_dicts",
    "rows_to_batch",
    "rows_as_tuples",
    "check_nulls",
    "require_pyarrow",
    "require_pandas",
    "EXTRA",
]

#: The extra of rstreams that installs pyarrow and pandas.
EXTRA: Final = "rstreams[spark]"

_SPARK_HINT: Final = "pass schema= (a DDL string or StructType) describing what the pipeline emits"


def _require(module: str, where: str) -> Any:
    """The optional ``module``, imported when first needed (``import rstreams`` stays light), or an
    ImportError saying ``where`` needs it and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"{where} needs {module}, which is not installed: pip install {module} (or {EXTRA}, "
            "which brings pyarrow and pandas)"
        ) from e


def require_pyarrow(where: str) -> Any:
    """The ``pyarrow`` module, or an ImportError saying ``where`` needs it and how to install it."""
    return _require("pyarrow", where)


def require_pandas(where: str) -> Any:
    """The ``pandas`` module, or an ImportError saying ``where`` needs it and how to install it."""
    return _require("pandas", where)


def _has_map(t: Any) -> bool:
    import pyarrow.types as pt

    if pt.is_map(t):
        return True
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t):
        return _has_map(t.value_type)
    if pt.is_struct(t):
        return any(_has_map(t.field(i).type) for i in range(t.num_fields))
    return False


def _maps_as_dicts(value: Any, t: Any) -> Any:
    """pyarrow gives a map as a list of (key, value) pairs; Spark's rows give a dict."""
    import pyarrow.types as pt

    if value is None:
        return None
    if pt.is_map(t):
        kt, it = t.key_type, t.item_type
        return {_maps_as_dicts(k, kt): _maps_as_dicts(v, it) for k, v in value}
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t):
        vt = t.value_type
        return [_maps_as_dicts(v, vt) for v in value]
    if pt.is_struct(t):
        return {f.name: _maps_as_dicts(value[f.name], f.type) for f in (t.field(i) for i in range(t.num_fields))}
    return value


def batch_to_rows(batch: Any) -> list[tuple[Any, ...]]:
    """A RecordBatch as a list of row tuples, converted column-wise (no ``Row`` objects).

    Values are what ``Row`` fields hold, except that a struct is a dict (``Row.asDict()``); a map
    column is a dict, as in Spark's rows.

    Example::

        import pyarrow as pa
        assert batch_to_rows(pa.RecordBatch.from_pydict({"a": [1, 2], "b": ["x", "y"]})) == [(1, "x"), (2, "y")]
    """
    cols = []
    for c in batch.columns:
        values = c.to_pylist()
        if _has_map(c.type):
            values = [_maps_as_dicts(v, c.type) for v in values]
        cols.append(values)
    if not cols:
        return [() for _ in range(batch.num_rows)]
    return list(zip(*cols, strict=True))


def batch_to_dicts(batch: Any) -> list[dict[str, Any]]:
    """A RecordBatch as a list of ``{column: value}`` dicts (values as in :func:`batch_to_rows`).

    Example::

        import pyarrow as pa
        assert batch_to_dicts(pa.RecordBatch.from_pydict({"a": [1]})) == [{"a": 1}]
    """
    if not any(_has_map(t) for t in batch.schema.types):
        dicts: list[dict[str, Any]] = batch.to_pylist()  # built in C++: ~1.6x the zip below
        return dicts
    names = batch.schema.names
    return [dict(zip(names, row, strict=True)) for row in batch_to_rows(batch)]


def check_nulls(batch: Any, out_schema: Any, what: str = "the pipeline") -> None:
    """A null in a non-nullable output column would fail inside the JVM's Arrow reader with an
    internal error that names neither the column nor the partition (and pyarrow itself does not
    check it): say it here, naming what produced it."""
    for i, field in enumerate(out_schema):
        if not field.nullable and batch.column(i).null_count:
            raise ValueError(
                f"{what} produced None for the non-nullable column {field.name!r}; "
                "pass a schema= whose column is nullable"
            )


def _unknown_keys(
    row: dict[Any, Any], known: set[Any], names: list[str], what: str, hint: str, schema: str = "the output schema"
) -> ValueError:
    extra = sorted(map(str, set(row).difference(known)))
    return ValueError(
        f"{what} emitted {row!r}, whose keys {extra} are not columns of {schema} "
        f"({', '.join(names)}); {hint}"
    )


def _check_keys(chunk: list[Any], names: list[str], what: str, hint: str) -> None:
    """Strict mode: a dict row with a key the schema does not have is an error (its value would
    be dropped without a word)."""
    known = set(names)
    for x in chunk:
        if isinstance(x, dict) and not known.issuperset(x):
            raise _unknown_keys(x, known, names, what, hint)


def rows_as_tuples(
    chunk: list[Any], names: list[str], what: str, hint: str, *, strict: bool = False, schema: str = "the output schema"
) -> list[tuple[Any, ...]]:
    """The rows of ``chunk`` as tuples in the order of ``names``: a dict by its keys (a missing
    key is None; with ``strict`` a key that is not a column is a ValueError), a single value as a
    one-tuple. A row of another width is a ValueError naming the row, ``what`` emitted it,
    ``schema`` (what the columns are: ``"the output schema"``) and ``hint``.

    Example::

        assert rows_as_tuples([{"b": 2, "a": 1}, (3, 4)], ["a", "b"], "map()", "") == [(1, 2), (3, 4)]
    """
    width = len(names)
    known = set(names) if strict else None
    rows: list[tuple[Any, ...]] = []
    for x in chunk:
        if isinstance(x, dict):
            if known is not None and not known.issuperset(x):
                raise _unknown_keys(x, known, names, what, hint, schema)
            x = tuple(x.get(n) for n in names)
        elif not isinstance(x, tuple):
            x = (x,)
        if len(x) != width:
            raise ValueError(
                f"{what} emitted {x!r} ({len(x)} values) but {schema} has {width} "
                f"columns ({', '.join(names)}); {hint}"
            )
        rows.append(x)
    return rows


def rows_to_batch(
    chunk: list[Any],
    out_schema: Any,
    pa: Any,
    *,
    strict: bool = False,
    what: str = "the pipeline",
    hint: str = _SPARK_HINT,
) -> Any:
    """The rows of ``chunk`` (tuples, dicts, or single values for a one-column schema) as one
    RecordBatch of ``out_schema``.

    A tuple of the wrong width is a ValueError naming the row, ``what`` emitted it and ``hint``.
    A dict's missing keys are nulls; with ``strict`` a key that is not a column is a ValueError too
    (otherwise it is ignored, as ``RecordBatch.from_pylist`` does).

    Example::

        import pyarrow as pa
        s = pa.schema([("a", pa.int64())])
        assert rows_to_batch([(1,), {"a": 2}], s, pa).column(0).to_pylist() == [1, 2]
    """
    names = out_schema.names
    if strict:
        _check_keys(chunk, names, what, hint)
    kinds = set(map(type, chunk))  # one C-level pass: the rows' exact types
    if kinds == {tuple}:
        pass  # the common case, below
    elif all(isinstance(x, dict) for x in chunk):
        return pa.RecordBatch.from_pylist(chunk, schema=out_schema)
    width = len(names)
    if kinds == {tuple}:  # the common case, column by column in C
        try:
            fast = list(zip(*chunk, strict=True))
        except ValueError:
            fast = None  # rows of different widths: the loop below names the first wrong one
        if fast is not None and len(fast) == width:
            return pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(fast, out_schema, strict=True)], schema=out_schema)
    cols = list(zip(*rows_as_tuples(chunk, names, what, hint), strict=True))
    return pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(cols, out_schema, strict=True)], schema=out_schema)
