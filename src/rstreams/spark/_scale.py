"""Scale-out: run a Flowable pipeline on every partition of a DataFrame, on the executors.

``run_on_spark(df, pipeline)`` ships ``pipeline`` (a function ``Flowable -> Flowable``, the very
code a user runs locally; pickled with cloudpickle by Spark) to the executors through
``mapInArrow``. In each task the partition's Arrow batches become a synchronous, pull-driven
Flowable: Spark pulling the output is the demand, so backpressure holds inside each partition.
When the pipeline is synchronous and fuses, its output iterator is consumed directly (one C loop
per chunk); otherwise it is drained with ``blocking_iterable``.

A streaming DataFrame works the same way: Structured Streaming runs the ``mapInArrow`` for every
micro-batch, so each partition of each micro-batch is one run of the pipeline (its state starts
afresh), and the result is a streaming DataFrame for any sink (``foreachBatch``, ``from_stream``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any, Final

from ..flowable import Flowable
from ..flowable.lowlevel import check_nulls as _check_nulls
from ..flowable.lowlevel import none_index
from ..flowable.lowlevel import rows_to_batch as _rows_to_batch

__all__ = ["run_on_spark", "PartitionError"]

_CHUNK: Final = 8192


class PartitionError(RuntimeError):
    """A pipeline failed inside a Spark task; the message names the partition."""


def _arrow_schema(spark_schema: Any) -> Any:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(spark_schema)


def _as_batches(b: Any, out_schema: Any, pa: Any) -> list[Any]:
    if isinstance(b, pa.Table):
        batches = b.to_batches()
    elif isinstance(b, pa.RecordBatch):
        batches = [b]
    else:
        raise TypeError(f"with as_='arrow' the pipeline must emit pyarrow.RecordBatch (or Table), got {type(b).__name__}")
    out = []
    for x in batches:
        if x.schema.names != out_schema.names:
            raise ValueError(
                f"the pipeline emitted a batch with columns {x.schema.names} but the output schema has "
                f"{out_schema.names}; pass schema= describing what the pipeline emits"
            )
        out.append(x if x.schema == out_schema else x.cast(out_schema))
    return out


def _make_task(pipeline: Callable[[Flowable[Any]], Flowable[Any]], as_: str, out_spark_schema: Any) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def task(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        from rstreams import Flowable as F
        from rstreams.spark._source import batch_to_rows

        out_schema = _arrow_schema(out_spark_schema)
        check_nulls = not all(f.nullable for f in out_schema)
        try:
            from pyspark import TaskContext

            ctx = TaskContext.get()
            partition = ctx.partitionId() if ctx is not None else -1
        except Exception:  # pragma: no cover
            partition = -1
        it: Iterator[Any] | None = None
        try:
            if as_ == "arrow":
                src = F.from_iterable(batches)
            else:
                src = F.from_iterable(itertools.chain.from_iterable(map(batch_to_rows, batches)))
            out = pipeline(src)
            if not isinstance(out, Flowable):
                raise TypeError(f"the pipeline must return a Flowable, got {type(out).__name__}")
            fz = out._fused()
            # one iterator for the whole partition: a BlockingIterator's __iter__ is a generator
            # that cancels when dropped, so islice() over the iterable itself would end the
            # stream after the first chunk
            it = fz.factory() if fz is not None else iter(out.blocking_iterable(prefetch=_CHUNK))
            if as_ == "arrow":
                for b in it:
                    if b is None:
                        raise TypeError("run_on_spark: the pipeline produced None (rule 2.13)")
                    for rb in _as_batches(b, out_schema, pa):
                        if check_nulls:
                            _check_nulls(rb, out_schema)
                        yield rb
                return
            while True:
                chunk = list(itertools.islice(it, _CHUNK))
                if not chunk:
                    return
                if none_index(chunk) >= 0:
                    raise TypeError("run_on_spark: the pipeline produced None (rule 2.13)")
                rb = _rows_to_batch(chunk, out_schema, pa)
                if check_nulls:
                    _check_nulls(rb, out_schema)
                yield rb
        except Exception as e:
            raise PartitionError(f"run_on_spark: the pipeline failed in partition {partition}: {type(e).__name__}: {e}") from e
        finally:
            close = getattr(it, "close", None)
            if close is not None:  # Spark stopped pulling early (limit): cancel the pipeline
                close()

    return task


def run_on_spark(df: Any, pipeline: Callable[[Flowable[Any]], Flowable[Any]], *, as_: str = "rows", schema: Any = None) -> Any:
    """Apply ``pipeline`` to every partition of ``df`` on the executors; returns a DataFrame.

    ``as_="rows"``: the pipeline sees row tuples and emits tuples (or dicts) matching ``schema``
    (a Spark DDL string or StructType; default: the input schema). ``as_="arrow"``: it sees and
    emits ``pyarrow.RecordBatch``es (vectorise with ``pyarrow.compute``).

    Example::

        out = spark.run_on_spark(df, lambda f: f.filter(lambda r: r[1] > 0.5).map(lambda r: (r[0], r[1] * 2)),
                                 schema="id long, x double")

    ``df`` may be a streaming DataFrame (``spark.readStream...``): the pipeline then runs on
    every partition of every micro-batch, and the result is streaming too::

        events = run_on_spark(spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 1000).load(),
                              lambda f: f.map(lambda r: (r[1], r[1] % 7)), schema="value long, bucket long")

    Backpressure: inside each task, Spark's pull of the output drives the pipeline's requests.
    State (``scan``, ``distinct``, ``take``...) is per partition (per micro-batch partition when
    streaming). Errors name the partition.
    """
    if as_ not in ("rows", "arrow"):
        raise ValueError(f"run_on_spark(): as_ must be 'rows' or 'arrow', got {as_!r}")
    if not callable(pipeline):
        raise TypeError("run_on_spark(): pipeline must be a function Flowable -> Flowable")
    from pyspark.sql.types import StructField, StructType

    out_schema: Any
    if schema is None:
        # the input's columns, nullable: a pipeline may emit None where the input had none
        # (spark.range's id is non-nullable)
        out_schema = StructType([StructField(f.name, f.dataType, True, f.metadata) for f in df.schema.fields])
    elif isinstance(schema, str):
        from pyspark.sql.types import _parse_datatype_string

        out_schema = _parse_datatype_string(schema)
    else:
        out_schema = schema
    if not isinstance(out_schema, StructType):
        raise TypeError(
            f"run_on_spark(): schema must describe columns (a StructType or a DDL string such as "
            f"'id long, x double'), got {schema!r}"
        )
    return df.mapInArrow(_make_task(pipeline, as_, out_schema), out_schema)
