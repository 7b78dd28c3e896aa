"""One shared SparkSession per test run: local[2], UI off, few shuffle partitions, test JVM flags."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pyspark = pytest.importorskip("pyspark", reason="the spark extra is not installed (pip install '.[spark]')")


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.fail("Java 17 is required for the Spark tests (it is the only system requirement)")
    from rstreams.spark import session

    os.environ["PYSPARK_PYTHON"] = sys.executable
    s = session(
        "local[2]",
        app_name="rstreams-tests",
        spark_sql_shuffle_partitions=2,
        spark_default_parallelism=2,
        spark_driver_memory="1g",
        spark_sql_warehouse_dir=str(tmp_path_factory.mktemp("warehouse")),
        spark_sql_streaming_stopTimeout="20s",
        spark_driver_extraJavaOptions="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        spark_sql_codegen_wholeStage="false",
    )
    yield s
    s.stop()
