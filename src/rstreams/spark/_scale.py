"""Scale-out: run a Flowable pipeline on every partition of a DataFrame, on the executors.

``run_on_spark(df, pipeline)`` ships ``pipeline`` (a function ``Flowable -> Flowable``, the very
code a user runs locally; pickled with cloudpickle by Spark) to the executors through
``mapInArrow``. In each task the partition's Arrow batches become a synchronous, pull-driven
Flowable: Spark pulling the output is the demand, so backpressure holds inside each partition.
When the pipeline is synchronous and fuses, its output iterator is consumed directly (one C loop
per chunk); otherwise it is drained with ``blocking_iterable``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any, Final

from ..flowable import Flowable
from ..flowable._fused import none_index

__all__ = ["run_on_spark", "PartitionError"]

_CHUNK: Final = 8192


class PartitionError(RuntimeError):
    """A pipeline failed inside a Spark task; the message names the partition."""


def _arrow_schema(spark_schema: Any) -> Any:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(spark_schema)


def _make_task(pipeline: Callable[[Flowable[Any]], Flowable[Any]], as_: str, out_spark_schema: Any) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def task(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        from rstreams import Flowable as F
        from rstreams.spark._source import batch_to_rows

        out_schema = _arrow_schema(out_spark_schema)
        try:
            from pyspark import TaskContext

            ctx = TaskContext.get()
            partition = ctx.partitionId() if ctx is not None else -1
        except Exception:  # pragma: no cover
            partition = -1
        try:
            if as_ == "arrow":
                src = F.from_iterable(batches)
            else:
                src = F.from_iterable(itertools.chain.from_iterable(map(batch_to_rows, batches)))
            out = pipeline(src)
            fz = out._fused()
            it: Iterator[Any] = fz.factory() if fz is not None else out.blocking_iterable(prefetch=_CHUNK)
            if as_ == "arrow":
                for b in it:
                    if b is None:
                        raise TypeError("run_on_spark: the pipeline produced None (rule 2.13)")
                    yield b if b.schema == out_schema else b.cast(out_schema) if hasattr(b, "cast") else b
                return
            names = out_schema.names
            types = [f.type for f in out_schema]
            while True:
                chunk = list(itertools.islice(it, _CHUNK))
                if not chunk:
                    return
                if none_index(chunk) >= 0:
                    raise TypeError("run_on_spark: the pipeline produced None (rule 2.13)")
                if isinstance(chunk[0], dict):
                    yield pa.RecordBatch.from_pylist(chunk, schema=out_schema)
                    continue
                if not isinstance(chunk[0], tuple):
                    chunk = [(x,) for x in chunk]
                cols = list(zip(*chunk, strict=True))
                yield pa.RecordBatch.from_arrays([pa.array(c, type=t) for c, t in zip(cols, types, strict=True)], names=names)
        except Exception as e:
            raise PartitionError(f"run_on_spark: the pipeline failed in partition {partition}: {type(e).__name__}: {e}") from e

    return task


def run_on_spark(df: Any, pipeline: Callable[[Flowable[Any]], Flowable[Any]], *, as_: str = "rows", schema: Any = None) -> Any:
    """Apply ``pipeline`` to every partition of ``df`` on the executors; returns a DataFrame.

    ``as_="rows"``: the pipeline sees row tuples and emits tuples (or dicts) matching ``schema``
    (a Spark DDL string or StructType; default: the input schema). ``as_="arrow"``: it sees and
    emits ``pyarrow.RecordBatch``es (vectorise with ``pyarrow.compute``).

    Example::

        out = spark.run_on_spark(df, lambda f: f.filter(lambda r: r[1] > 0.5).map(lambda r: (r[0], r[1] * 2)),
                                 schema="id long, x double")

    Backpressure: inside each task, Spark's pull of the output drives the pipeline's requests.
    State (``scan``, ``distinct``, ``take``...) is per partition. Errors name the partition.
    """
    if as_ not in ("rows", "arrow"):
        raise ValueError(f"run_on_spark(): as_ must be 'rows' or 'arrow', got {as_!r}")
    if not callable(pipeline):
        raise TypeError("run_on_spark(): pipeline must be a function Flowable -> Flowable")
    if schema is None:
        out_schema = df.schema
    elif isinstance(schema, str):
        from pyspark.sql.types import _parse_datatype_string

        out_schema = _parse_datatype_string(schema)
    else:
        out_schema = schema
    return df.mapInArrow(_make_task(pipeline, as_, out_schema), out_schema)
