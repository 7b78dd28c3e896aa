"""Facade methods of Flowable for interoperability (Arrow and pandas outside Spark, reactivex Observables) (a mixin of :class:`Flowable`).

Methods here follow the same rules as ``_flowable.py``: thin, calling their operator module
through ``lazy_function`` (imported on first use), each with a docstring holding a small example
and "Backpressure:"/"Scheduler:" notes.

pyarrow, pandas and reactivex are optional: nothing here imports them; each method imports what
it needs when called, and a missing one is an ImportError naming how to install it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

from ._enums import BackpressureOverflow, BackpressureStrategy
from ._lazy import lazy_function

if TYPE_CHECKING:
    from reactivex import Observable

    from ._flowable import Flowable

# Operator implementations, imported on first use (``import rstreams`` stays light).
if TYPE_CHECKING:
    from .operators._to_arrow_batches import to_arrow_batches as _i_to_arrow_batches
    from .operators._to_arrow_batches import to_pandas as _i_to_pandas
    from .operators._to_observable import to_observable as _i_to_observable
    from .sources._from_arrow import from_arrow as _i_from_arrow
    from .sources._from_arrow import from_pandas as _i_from_pandas
    from .sources._from_observable import from_observable as _i_from_observable
else:
    _i_from_arrow = lazy_function(".sources._from_arrow", "from_arrow", "_i_from_arrow", globals())
    _i_from_pandas = lazy_function(".sources._from_arrow", "from_pandas", "_i_from_pandas", globals())
    _i_from_observable = lazy_function(".sources._from_observable", "from_observable", "_i_from_observable", globals())
    _i_to_arrow_batches = lazy_function(".operators._to_arrow_batches", "to_arrow_batches", "_i_to_arrow_batches", globals())
    _i_to_pandas = lazy_function(".operators._to_arrow_batches", "to_pandas", "_i_to_pandas", globals())
    _i_to_observable = lazy_function(".operators._to_observable", "to_observable", "_i_to_observable", globals())

__all__ = ["InteropMixin"]

T = TypeVar("T")
E = TypeVar("E")


def _f(mixin: InteropMixin[T]) -> Flowable[T]:
    """The mixin is always a Flowable at run time (typing helper)."""
    return cast("Flowable[T]", mixin)


class InteropMixin(Generic[T]):
    __slots__ = ()

    # ------------------------------------------------------------------------------------------
    # Arrow and pandas (outside Spark)

    @staticmethod
    def from_arrow(
        data: Any, *, as_: Literal["rows", "dicts", "batches"] = "rows", batch_size: int | None = None
    ) -> Flowable[Any]:
        """Emit the rows of pyarrow data: a ``Table``, a ``RecordBatch``, a ``RecordBatchReader``, or a
        list or iterator of RecordBatches (or Tables).

        ``as_="rows"``: one tuple per row; ``"dicts"``: one ``{column: value}`` dict per row (column
        names must be unique); ``"batches"``: the record batches themselves, cut into zero-copy
        slices of at most ``batch_size`` rows when it is given. Values are Python objects as
        ``to_pylist`` makes them, except that a map column is a dict (as in Spark's rows). Rows are
        converted a slice at a time (``batch_size`` rows, default 65,536), column by column in C.
        Empty batches are skipped. In-memory data may be subscribed any number of times; a reader or
        an iterator once (a second subscriber gets ``OneShotIteratorError``). Needs pyarrow.

        Example::

            table = pyarrow.table({"id": [1, 2], "name": ["a", "b"]})
            Flowable.from_arrow(table).test().assert_result((1, "a"), (2, "b"))
            Flowable.from_arrow(table, as_="dicts").test().assert_values({"id": 1, "name": "a"}, {"id": 2, "name": "b"})

        Backpressure: honours requests exactly, as ``from_iterable``; a batch is converted when its
        first row is requested, so memory holds one converted slice beyond what the downstream keeps.
        A reader or iterator is read one row ahead, as RxJava's ``fromIterable`` asks ``hasNext()``
        (at subscription and when demand is met), so the stream completes with its last row: its
        next batch may be read before it is requested.
        Batch-taking consumers (``count``, ``to_list``, ``reduce``) get the rows as lists.
        Scheduler: none; rows are emitted on the requesting thread.
        """
        return _i_from_arrow(data, as_, batch_size)

    @staticmethod
    def from_pandas(
        df: Any, *, as_: Literal["rows", "dicts", "frames"] = "rows", batch_size: int | None = None
    ) -> Flowable[Any]:
        """Emit the rows of a pandas DataFrame: tuples (``as_="rows"``, the index left out), dicts
        (``"dicts"``, column names must be unique) or DataFrame slices of ``batch_size`` rows
        (``"frames"``, default 65,536). Numeric values are Python scalars (``itertuples``). The
        DataFrame is read at subscription: each subscriber gets a full pass. Needs pandas (not
        pyarrow).

        Example::

            df = pandas.DataFrame({"id": [1, 2], "x": [0.5, 1.5]})
            Flowable.from_pandas(df).test().assert_result((1, 0.5), (2, 1.5))

        Backpressure: honours requests exactly, as ``from_iterable``: a row is read when requested.
        Scheduler: none; rows are emitted on the requesting thread.
        """
        return _i_from_pandas(df, as_, batch_size)

    def to_arrow_batches(self, schema: Any = None, batch_size: int = 8192) -> Flowable[Any]:
        """Collect rows (tuples, dicts, or single values for a one-column schema) into pyarrow
        ``RecordBatch``es of ``batch_size`` rows (the last one shorter).

        ``schema``: a ``pyarrow.Schema``; or column names (types inferred from the first batch, then
        kept); or None with dict rows (names and types from the first batch's keys and values). A row
        that does not fit is an error, never a dropped value: a tuple of another width, a dict key
        that is not a column, a value the column's type cannot hold (the error names the column), a
        None in a non-nullable column. A dict's missing keys are nulls. Needs pyarrow.

        Example::

            schema = pyarrow.schema([("id", pyarrow.int64()), ("name", pyarrow.string())])
            ts = Flowable.just((1, "a"), (2, "b"), (3, "c")).to_arrow_batches(schema, batch_size=2).test()
            assert [b.num_rows for b in ts.values] == [2, 1]

        Backpressure: as ``buffer(batch_size)``: a request of ``n`` batches requests
        ``n * batch_size`` rows upstream.
        Scheduler: none; a batch is built and emitted on the thread that delivers its last row (or
        the completion).
        """
        return _i_to_arrow_batches(_f(self), schema, batch_size)

    def to_pandas(self, columns: Sequence[Any] | None = None) -> Flowable[Any]:
        """Collect the stream into one pandas DataFrame, emitted on completion.

        The elements are row tuples (or single values), dicts (their keys are the columns; with
        ``columns`` given, a key outside it is an error rather than a dropped value), pyarrow
        RecordBatches/Tables (concatenated; ``to_arrow_batches().to_pandas()``), or DataFrames
        (concatenated). ``columns`` names the columns of tuple rows. Needs pandas.

        Example::

            Flowable.just((1, "a"), (2, "b")).to_pandas(["id", "name"]).blocking_first()   # a 2-row DataFrame

        Backpressure: consumes the upstream unbounded (as ``to_list``); the DataFrame waits for a request.
        Scheduler: none; the DataFrame is built on the thread of the upstream's completion.
        """
        return _i_to_pandas(_f(self), columns)

    # ------------------------------------------------------------------------------------------
    # reactivex (RxPY) Observables

    @staticmethod
    def from_observable(
        observable: Observable[E],
        strategy: BackpressureStrategy,
        capacity: int | None = None,
        on_overflow: BackpressureOverflow = BackpressureOverflow.ERROR,
    ) -> Flowable[E]:
        """A reactivex (RxPY 4+) Observable as a Flowable (RxJava's ``toFlowable(strategy)``).

        An Observable cannot be backpressured, so ``strategy`` is required and says what happens to
        what it pushes without downstream demand: ``BUFFER`` (kept until requested: unbounded, or
        at most ``capacity`` with ``on_overflow`` applied when full: ERROR signals
        ``MissingBackpressureError``, DROP_OLDEST/DROP_LATEST drop), ``DROP``, ``LATEST`` (only the
        newest waits), ``ERROR`` (``MissingBackpressureError`` at the first element without
        demand) or ``MISSING`` (pushed regardless; a downstream operator must cope). Each subscriber
        subscribes the Observable; cancelling disposes that subscription, even a synchronous
        Observable still emitting from inside ``subscribe``. A ``None`` element ends the stream
        with ``NoneElementError`` (rule 2.13). Needs reactivex.

        Example::

            ts = Flowable.from_observable(reactivex.of(1, 2, 3), BackpressureStrategy.BUFFER).test(1)
            ts.assert_values(1); ts.request(2); ts.assert_result(1, 2, 3)

        Backpressure: per ``strategy`` (see above); the Observable is never slowed down.
        Scheduler: none; the Observable is subscribed on the subscribing thread (its own schedulers
        apply); elements go out on the thread it emits on, or, when they waited for demand, on the
        requesting thread.
        """
        return _i_from_observable(observable, strategy, capacity, on_overflow)

    def to_observable(self, prefetch: int | None = None) -> Observable[T]:
        """This Flowable as a reactivex (RxPY 4+) Observable (RxJava's ``toObservable()``).

        Each Observer subscription subscribes this Flowable. With ``prefetch=None`` it requests
        unbounded, as RxJava does; with ``prefetch=n`` it requests ``n``, then ``n - n // 4`` each
        time that many were delivered, so the upstream runs at most ``n`` elements ahead of the
        Observer (bounding asynchronous stages' queues when the Observer is slow). Disposing the
        Observer's Disposable cancels the subscription. Needs reactivex.

        Example::

            got = []
            Flowable.range(1, 3).to_observable().subscribe(got.append)
            assert got == [1, 2, 3]

        Backpressure: none downstream (an Observer takes what comes); upstream, unbounded or
        ``prefetch`` at a time as described.
        Scheduler: none; the Observer is called on the threads the Flowable emits on; the
        Observable's ``subscribe(scheduler=...)`` is not used.
        """
        return cast("Observable[T]", _i_to_observable(_f(self), prefetch))
