"""rstreams on Apache Spark (extra ``rstreams[spark]``): backpressured sources and sinks over
DataFrames and Structured Streaming, and pipelines that scale out on the executors.

Local Spark (``local[*]``) is the embedded default; a cluster is a master URL away. Java 17 is the
only system requirement. Importing this module does not import pyspark; the functions do.

Example::

    from rstreams import Flowable, spark
    s = spark.session()
    result = spark.to_spark(Flowable.range(0, 10_000).map(lambda i: {"id": i}), path="/tmp/ids")
    n = spark.from_dataframe(s.read.parquet("/tmp/ids"), as_="rows").count().blocking_first()
"""

from ._jvm import SparkJvmDiedError
from ._progress import Progress
from ._scale import PartitionError, run_on_spark
from ._schema import path_schema
from ._session import DEFAULT_CONF, SparkUnavailableError, check_java, session
from ._sink import (
    InputMismatchError,
    LandingInUseError,
    SchemaMismatchError,
    SinkResult,
    SinkWriteError,
    SparkSink,
    WritePolicy,
    to_spark,
)
from ._source import batch_to_rows, from_dataframe, from_sql, from_table
from ._streaming import CheckpointInUseError, from_stream, landed_stream

__all__ = [
    "CheckpointInUseError",
    "DEFAULT_CONF",
    "InputMismatchError",
    "LandingInUseError",
    "PartitionError",
    "Progress",
    "SchemaMismatchError",
    "SinkResult",
    "SinkWriteError",
    "SparkJvmDiedError",
    "SparkSink",
    "SparkUnavailableError",
    "WritePolicy",
    "batch_to_rows",
    "check_java",
    "from_dataframe",
    "from_sql",
    "from_stream",
    "from_table",
    "landed_stream",
    "path_schema",
    "run_on_spark",
    "session",
    "to_spark",
]
