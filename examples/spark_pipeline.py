"""The Spark demo's pieces, small: one pipeline function run on the driver and on the executors,
a named (exactly-once) landing, and reading the landing back with backpressure.

Needs the spark extra (``pip install -e '.[spark]'``) and Java 17.

    python examples/spark_pipeline.py [OUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile

from rstreams import Flowable, spark


# --8<-- [start:pipeline]
def pipeline(rows: Flowable) -> Flowable:
    """The per-record stages: the same function on the driver and on every partition."""
    return rows.filter(lambda r: r[0] % 3 != 0).map(lambda r: (r[0], r[0] * r[0]))
# --8<-- [end:pipeline]


# --8<-- [start:main]
def main(out: str) -> None:
    s = spark.session("local[2]")
    try:
        # 1. driver: a Flowable landed through Spark, batch by batch; the name makes it exactly-once
        records = Flowable.range(0, 1_000).map(lambda i: {"id": i})
        first = spark.to_spark(records, path=f"{out}/ids", name="ids-v1", batch_rows=250)
        again = spark.to_spark(records, path=f"{out}/ids", name="ids-v1", batch_rows=250)
        print(f"landed {first.rows} rows in {first.batches} batches; re-run landed {again.rows} "
              f"(already complete: {again.already_complete})")

        # 2. back to the driver: the DataFrame as a Flowable of rows, pulled under demand
        df = s.read.parquet(f"{out}/ids")
        on_driver = pipeline(spark.from_dataframe(df, as_="rows")).count().blocking_first()
        print(f"pipeline on the driver: {on_driver} rows")

        # 3. executors: the same pipeline on every partition (mapInArrow)
        result = spark.run_on_spark(df, pipeline, schema="id long, sq long")
        print(f"pipeline on the executors: {result.count()} rows, max sq {result.agg({'sq': 'max'}).first()[0]}")
    finally:
        s.stop()
# --8<-- [end:main]


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="rstreams-example-"))
