"""TCK lines for the interop methods (Arrow and pandas outside Spark, reactivex Observables).

pyarrow, pandas and reactivex are optional: a method whose library is not installed gets a
``NOT_VERIFIABLE`` reason instead of an entry (imported only inside ``make``, so collecting the
table never imports them)."""

from __future__ import annotations

import importlib.util
from typing import Any

from library_publishers import Entry

from rstreams import BackpressureStrategy, Flowable


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _table(n: int) -> Any:
    import pyarrow as pa

    return pa.table({"a": pa.array(range(n), pa.int64())})


def _failing_batches() -> Any:
    raise RuntimeError("failed publisher")
    yield  # a generator: the error comes at the first pull


def _from_pandas(n: int) -> Flowable[Any]:
    import pandas as pd

    return Flowable.from_pandas(pd.DataFrame({"a": range(n)}))


def _to_arrow_batches(n: int) -> Flowable[Any]:
    import pyarrow as pa

    schema = pa.schema([("a", pa.int64())])
    return Flowable.range(0, n).map(lambda i: (i,)).to_arrow_batches(schema, batch_size=1)


def _from_observable(n: int) -> Flowable[Any]:
    import reactivex

    return Flowable.from_observable(reactivex.range(0, n), BackpressureStrategy.BUFFER)


def _failed_observable() -> Flowable[Any]:
    import reactivex

    return Flowable.from_observable(reactivex.throw(RuntimeError("failed publisher")), BackpressureStrategy.BUFFER)


ENTRIES: dict[str, Entry] = {}
NOT_VERIFIABLE: dict[str, str] = {}

if _has("pyarrow"):
    # an in-memory table: an exact-count, re-subscribable publisher
    ENTRIES["from_arrow"] = Entry(
        lambda n: Flowable.from_arrow(_table(n)), max_elements=10_000,
        failed=lambda: Flowable.from_arrow(_failing_batches()),
    )
    ENTRIES["from_arrow_hidden"] = Entry(lambda n: Flowable.from_arrow(_table(n), as_="dicts").hide(), max_elements=10_000)
    ENTRIES["to_arrow_batches"] = Entry(_to_arrow_batches, max_elements=1000)
else:
    for _name in ("from_arrow", "to_arrow_batches"):
        NOT_VERIFIABLE[_name] = "pyarrow is not installed (an optional dependency)"

if _has("pandas"):
    ENTRIES["from_pandas"] = Entry(_from_pandas, max_elements=10_000)
    # one DataFrame at completion, as to_list
    ENTRIES["to_pandas"] = Entry(lambda n: Flowable.range(0, 10).hide().map(lambda i: (i,)).to_pandas(), max_elements=1)
else:
    for _name in ("from_pandas", "to_pandas"):
        NOT_VERIFIABLE[_name] = "pandas is not installed (an optional dependency)"

if _has("reactivex"):
    # a synchronous Observable pushes everything at subscription: BUFFER holds it until requested
    ENTRIES["from_observable"] = Entry(_from_observable, max_elements=10_000, failed=_failed_observable)
else:
    NOT_VERIFIABLE["from_observable"] = "reactivex is not installed (an optional dependency)"

#: to_observable returns a reactivex Observable, not a Publisher.
CONSUMERS: set[str] = {"to_observable"}
