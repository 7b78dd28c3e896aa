"""One schema per landed path: rows and record batches are converted to it, or refused.

The first batch landed into a path fixes its schema (``schema=`` when given, else inferred from
every key of every row of that batch); it is stored under ``<path>/_rstreams/schema/<v>.json``.
Each later batch, of this landing or another, is converted to it before anything of the batch is
written: a missing key is a null, a value is cast only where the cast is exact (a wider integer,
an integer into a float, ``string`` into ``large_string``...), and an unknown key or a value that
does not fit is a :class:`~rstreams.spark.SchemaMismatchError` naming the column and the row.
``merge_schema=True`` lets a batch add nullable columns (a new schema version); readers then see
them with ``spark.read.option("mergeSchema", "true")`` or the schema of :func:`path_schema`.
Nothing is ever dropped silently.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
from typing import Any

from ._landing import CONTROL_DIR, write_atomic

__all__ = ["SchemaStore", "rows_to_table", "conform", "SchemaProblem", "path_schema"]


class SchemaProblem(ValueError):
    """What does not fit, in words; the sink turns it into a SchemaMismatchError with the batch."""


class SchemaStore:
    """``<root>/_rstreams/schema/<v>.json``: the versions of a path's schema (the highest wins)."""

    def __init__(self, root: str) -> None:
        self.dir = os.path.join(root, CONTROL_DIR, "schema")

    def current(self) -> tuple[int, Any] | None:
        import pyarrow as pa

        try:
            names = [n for n in os.listdir(self.dir) if n.endswith(".json") and n[:-5].isdigit()]
        except FileNotFoundError:
            return None
        if not names:
            return None
        v = max(int(n[:-5]) for n in names)
        with open(os.path.join(self.dir, f"{v:08d}.json"), encoding="utf-8") as f:
            data = json.load(f)
        schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(data["arrow"])))
        return v, schema

    def register(self, version: int, schema: Any) -> bool:
        """Create version ``version`` (False if another writer created it first)."""
        os.makedirs(self.dir, exist_ok=True)
        data = {
            "fields": [f"{f.name}: {f.type}" for f in schema],
            "arrow": base64.b64encode(schema.serialize().to_pybytes()).decode("ascii"),
        }
        return write_atomic(os.path.join(self.dir, f"{version:08d}.json"), json.dumps(data, indent=1).encode(), exclusive=True)


def path_schema(path: str) -> Any:
    """The pyarrow schema of what ``to_spark`` landed in ``path`` (None if nothing yet).

    Example::

        spark.to_spark(Flowable.range(0, 1000).map(lambda i: {"id": i}), path="/tmp/ids")
        spark.path_schema("/tmp/ids")          # id: int64
    """
    from ._sink import _local_path

    cur = SchemaStore(_local_path(path)).current()
    return None if cur is None else cur[1]


# -- compatibility ---------------------------------------------------------------------------
def castable(src: Any, dst: Any) -> bool:
    """True when every value of type ``src`` has an exact value of type ``dst`` (a safe cast may
    still refuse a value out of range, which is then an error, never a truncation)."""
    import pyarrow.types as pt

    if src.equals(dst) or pt.is_null(src):
        return True
    if pt.is_integer(src) and (pt.is_integer(dst) or pt.is_floating(dst) or pt.is_decimal(dst)):
        return True
    if pt.is_floating(src) and pt.is_floating(dst):
        return bool(dst.bit_width >= src.bit_width)
    if pt.is_decimal(src) and pt.is_decimal(dst):
        return True  # the safe cast refuses a value that loses digits
    for fam in (
        (pt.is_string, pt.is_large_string),
        (pt.is_binary, pt.is_large_binary),
        (pt.is_date32, pt.is_date64),
    ):
        if any(f(src) for f in fam) and any(f(dst) for f in fam):
            return True
    if pt.is_timestamp(src) and pt.is_timestamp(dst):
        return bool(src.tz == dst.tz)
    if (pt.is_list(src) or pt.is_large_list(src)) and (pt.is_list(dst) or pt.is_large_list(dst)):
        return castable(src.value_type, dst.value_type)
    if pt.is_struct(src) and pt.is_struct(dst):
        names = {dst.field(i).name: dst.field(i).type for i in range(dst.num_fields)}
        return all(
            src.field(i).name in names and castable(src.field(i).type, names[src.field(i).name])
            for i in range(src.num_fields)
        )
    return False


def conform(table: Any, schema: Any, merge: bool, first_row: int | None = None) -> tuple[Any, Any | None]:
    """``table`` with ``schema``'s columns, types and order; with ``merge``, columns ``schema``
    lacks are appended (nullable) and the grown schema is returned second (else None). A null
    (a missing key) in a column the schema declares non-nullable is refused here, naming the row
    (``first_row``: the landing's index of the table's first row), not by the file writer later."""
    import pyarrow as pa

    names = set(schema.names)
    extra = [f for f in table.schema if f.name not in names]
    grown = None
    if extra:
        if not merge:
            cols = ", ".join(repr(f.name) for f in extra)
            raise SchemaProblem(
                f"column(s) {cols} are not in the landing's schema ({_fields(schema)}); pass "
                "merge_schema=True to add them as nullable columns, or land them elsewhere"
            )
        for f in extra:
            if pa.types.is_null(f.type):
                raise SchemaProblem(f"new column {f.name!r} is None in every row, so its type is unknown: give schema=")
        grown = pa.schema(list(schema) + [f.with_nullable(True) for f in extra])
        schema = grown
    if table.schema.equals(schema, check_metadata=False):
        return _nonnullable_filled(table, schema, first_row), grown
    arrays = []
    for field in schema:
        idx = table.schema.get_field_index(field.name)
        if idx < 0:
            arrays.append(pa.nulls(table.num_rows, type=field.type))
            continue
        col = table.column(idx)
        if col.type.equals(field.type):
            arrays.append(col)
            continue
        if not castable(col.type, field.type):
            raise SchemaProblem(
                f"column {field.name!r} is {col.type} here but {field.type} in the landing's schema, and "
                f"{col.type} cannot be cast to {field.type} without changing values"
            )
        try:
            arrays.append(col.cast(field.type, safe=True))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise SchemaProblem(f"column {field.name!r}: a value does not fit {field.type} ({e})") from e
    return _nonnullable_filled(pa.Table.from_arrays(arrays, schema=schema), schema, first_row), grown


def _nonnullable_filled(table: Any, schema: Any, first_row: int | None) -> Any:
    """``table``, checked: no null in a column ``schema`` declares non-nullable (``from_arrays``
    does not check it; a Parquet writer refuses it at the write step, after every retry)."""
    import pyarrow.compute as pc

    for field in schema:
        if field.nullable:
            continue
        col = table.column(field.name)
        if col.null_count:
            i = int(pc.index(pc.is_null(col), True).as_py())
            where = f"row {first_row + i}" if first_row is not None else "a row"
            raise SchemaProblem(
                f"column {field.name!r} is declared non-nullable in the landing's schema, but {where} has no "
                "value for it (a missing key or None)"
            )
    return table


def _fields(schema: Any) -> str:
    return ", ".join(f"{f.name}: {f.type}" for f in schema)


# -- rows -> Arrow -----------------------------------------------------------------------------
def _column(name: str, values: list[Any], type_: Any, first_row: int) -> Any:
    """One column as an Arrow array; a value that does not fit names its row."""
    import pyarrow as pa

    if type_ is not None and pa.types.is_integer(type_):
        # pyarrow's conversion of Python floats to an integer type truncates silently (1.5 -> 1):
        # convert without the type, then cast safely, which refuses a fraction (2.0 still fits)
        exact = _integer_column(name, values, type_, first_row)
        if exact is not None:
            return exact
    if type_ is not None and pa.types.is_temporal(type_):
        # pyarrow's typed conversion drops what the type cannot hold (sub-seconds into
        # timestamp[s], the time of day into date32): convert with the values' own type, then
        # cast safely and check what a safe cast lets through
        exact = _temporal_column(name, values, type_, first_row)
        if exact is not None:
            return exact
    try:
        return pa.array(values, type=type_, from_pandas=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
        ref = None
        for i, v in enumerate(values):
            if v is None:
                continue
            try:
                if type_ is not None:
                    pa.array([v], type=type_)
                elif ref is None:
                    ref = pa.array([v]).type
                else:
                    pa.array([v], type=ref)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
                want = type_ if type_ is not None else ref
                raise SchemaProblem(
                    f"column {name!r}: row {first_row + i} has {v!r} ({type(v).__name__}), which does not fit "
                    f"{want}" + ("" if type_ is not None else " (the type of the column's earlier values)")
                ) from e
        raise SchemaProblem(f"column {name!r}: {e}") from e


def _integer_column(name: str, values: list[Any], type_: Any, first_row: int) -> Any:
    """``values`` as an array of the integer ``type_`` without truncating a float, or None when
    they are not all numbers (the typed conversion then accepts or refuses them)."""
    import pyarrow as pa

    try:
        inferred = pa.array(values, from_pandas=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        inferred = None  # mixed kinds, or ints beyond what floats hold exactly: checked one by one
    if inferred is not None and not (pa.types.is_integer(inferred.type) or pa.types.is_floating(inferred.type)):
        return None
    if inferred is not None:
        if inferred.type.equals(type_):
            return inferred
        try:
            return inferred.cast(type_, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # a fraction or an out-of-range value: name the row below
    for i, v in enumerate(values):
        if isinstance(v, float) and not v.is_integer():
            raise SchemaProblem(
                f"column {name!r}: row {first_row + i} has {v!r} (float), which does not fit {type_} "
                "without changing its value"
            )
    return None  # no fraction: the typed conversion reports a value out of range


def _temporal_column(name: str, values: list[Any], type_: Any, first_row: int) -> Any:
    """``values`` as an array of the temporal ``type_`` without losing a part of a value, or None
    when their own type is not temporal (the typed conversion then accepts or refuses them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        inferred = pa.array(values, from_pandas=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return None
    if not pa.types.is_temporal(inferred.type) or inferred.type.equals(type_):
        return inferred if inferred.type.equals(type_) else None
    try:
        out = inferred.cast(type_, safe=True)
        if pa.types.is_timestamp(inferred.type) and pa.types.is_date(type_):
            back = out.cast(inferred.type)  # the time of day a date cannot hold
            lost = pc.invert(pc.fill_null(pc.equal(back, inferred), True))
        else:
            lost = None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        lost, err = None, e
    else:
        err = None
        if lost is None or not pc.any(lost).as_py():
            return out
    bad = 0
    if lost is not None:
        bad = int(pc.index(lost, True).as_py())
    else:
        for i, v in enumerate(values):
            try:
                pa.array([v]).cast(type_, safe=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
                bad = i
                break
    raise SchemaProblem(
        f"column {name!r}: row {first_row + bad} has {values[bad]!r}, which {type_} cannot hold without "
        f"losing part of it" + (f" ({err})" if err is not None else "")
    )


def rows_to_table(rows: list[Any], schema: Any, merge: bool, first_row: int) -> Any:
    """Rows of one kind (dicts, pyspark Rows, named tuples, tuples, or scalars) as an Arrow table.

    With ``schema``, columns are converted to its types (a missing key is null; an unknown key is
    an error unless ``merge``: then it is inferred and appended, and :func:`conform` grows the
    schema). Without, every key of every row is a column, typed from its values.
    ``first_row`` is the landing's index of ``rows[0]`` (for the messages)."""
    import pyarrow as pa

    first = rows[0]
    if hasattr(first, "asDict"):  # pyspark Row
        rows = [r.asDict(recursive=True) for r in rows]
        first = rows[0]
    if isinstance(first, dict):
        keys = list(dict.fromkeys(itertools.chain.from_iterable(rows)))
        types = {f.name: f.type for f in schema} if schema is not None else {}
        cols = {}
        for k in keys:
            if not isinstance(k, str):
                raise SchemaProblem(f"a row has the key {k!r} ({type(k).__name__}): column names must be str")
            cols[k] = _column(k, [r.get(k) for r in rows], types.get(k), first_row)
        if schema is not None:
            for f in schema:
                if f.name not in cols:
                    cols[f.name] = pa.nulls(len(rows), type=f.type)
        return _nonnull(pa.table(cols), schema)
    if isinstance(first, tuple):
        width = len(first)
        for i, r in enumerate(rows):
            if len(r) != width:
                raise SchemaProblem(
                    f"row {first_row + i} is a tuple of {len(r)} values, row {first_row} of {width}: tuples "
                    "must all have the same width (use dicts or named tuples for optional columns)"
                )
        fields = getattr(first, "_fields", None)
        if fields:
            names = list(fields)
        elif schema is not None:
            if width != len(schema):
                raise SchemaProblem(
                    f"row {first_row} is a tuple of {width} values but the landing's schema has "
                    f"{len(schema)} columns ({_fields(schema)})"
                )
            names = list(schema.names)
        else:
            names = [f"c{i}" for i in range(width)]
        types = {f.name: f.type for f in schema} if schema is not None else {}
        columns: list[Any] = list(zip(*rows, strict=True)) if rows else [[] for _ in names]
        cols = {n: _column(n, list(c), types.get(n), first_row) for n, c in zip(names, columns, strict=True)}
        return _nonnull(pa.table(cols), schema)
    type_ = None
    if schema is not None and "value" in schema.names:
        type_ = schema.field("value").type
    return _nonnull(pa.table({"value": _column("value", list(rows), type_, first_row)}), schema)


def _nonnull(table: Any, schema: Any) -> Any:
    """Without a schema to give them a type, columns that are None in every row are refused."""
    import pyarrow as pa

    if schema is None:
        for f in table.schema:
            if pa.types.is_null(f.type):
                raise SchemaProblem(
                    f"column {f.name!r} is None in every row of the first batch, so its type is unknown; "
                    "give schema=pyarrow.schema([...]) to land it"
                )
    return table
