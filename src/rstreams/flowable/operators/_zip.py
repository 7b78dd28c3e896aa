"""zip(*sources, zipper?, prefetch): combine the n-th elements of every source.

Structure (RxJava's zipArray, queue-drain of seed 004):

* Each source has an inner subscriber with a bounded queue: it asks for ``prefetch`` elements and
  is replenished by ``limit = prefetch - prefetch // 4`` once the drain has consumed that many.
  Sources may emit from any thread; ``on_next`` only appends (one producer per queue) and bumps
  the shared ``wip`` counter.
* The drain (whoever moves ``wip`` from 0; rule 1.3) emits a row only when every queue has an
  element and the downstream has demand (rule 1.1; demand published once per pass). A row is
  ``zipper(*values)``, or a tuple without a zipper.
* Completion: as soon as one source is done and its queue is empty no further row can be made:
  the other sources are cancelled and ``on_complete`` is signalled (checked eagerly, even without
  demand).
* Errors are immediate: the first error (from a source, the zipper or a rule 3.9 bad request) is
  stored once (race: errors from several threads), every source is cancelled and the error is
  signalled by the drain. A zipper returning None is a TypeError.
* Batches (library-internal protocol): the inners take a batch-capable source's batches in one
  ``extend``; when every queue holds several elements the drain pops a run of rows at once (one
  C-level pop per queue, one replenish per run) and hands it to a batch-capable downstream in one
  call; a one-by-one downstream still sees the zipper called per row as the row is emitted.

Over synchronous fused sources, zip folds at assembly time into builtin ``zip``/``map``.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator
from functools import partial
from itertools import starmap, takewhile
from operator import is_not
from typing import Any, Final, TypeVar, final

from ..._internal import plugins
from ..._internal.arguments import positive_int
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.drain import enter, leave
from ..._internal.requests import DEFAULT_PREFETCH, MAX_DEMAND, produced
from ..._internal.subscribers import NOOP_SUBSCRIBER
from ..._spec import Subscriber
from .._base import FirstErrorDrain, as_flowable, none_result_error, variadic_sources
from .._flowable import Flowable
from .._fused import FusedFlowable, Fusion, Sizer, batch_sink, none_checked
from ._inner import QueuedInner, pop_run

__all__ = ["zip_"]

T = TypeVar("T")

_not_none: Final = partial(is_not, None)



@final
class _ZipCoordinator(FirstErrorDrain):
    _rs_no_wrap = True
    _op = "zip"
    __slots__ = ("_downstream", "_zipper", "_inners", "_requested", "_wip", "_error", "_cancelled", "_downstream_cancelled")

    def __init__(self, downstream: Subscriber[Any], zipper: Callable[..., Any] | None, n: int, prefetch: int) -> None:
        self._downstream: Subscriber[Any] = downstream
        self._zipper = zipper
        self._inners = [QueuedInner(self, prefetch, "zip") for _ in range(n)]
        self._requested = AtomicInt(0)  # rule 1.1 (race: request vs drain)
        self._wip = AtomicInt(0)  # queue-drain: one drainer at a time (rule 1.3)
        self._error: AtomicRef[BaseException | None] = AtomicRef(None)  # first error wins
        self._cancelled = False
        self._downstream_cancelled = False

    def subscribe_all(self, sources: tuple[Flowable[Any], ...]) -> None:
        for src, inner in zip(sources, self._inners, strict=True):
            # As RxJava: stop only on a downstream cancel or an error. After a completion (an empty
            # source ended the zip) the rest are still subscribed and their already-cancelled
            # inners cancel them at once, so their subscription side effects happen as expected.
            if self._downstream_cancelled or self._error.get() is not None:
                return
            src.subscribe(inner)

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._downstream_cancelled = True
        self._cancel_all()
        if enter(self._wip):  # race: cancel vs a running drain (it cleans up)
            self._cleanup()

    def _cancel_all(self) -> None:
        for inner in self._inners:
            inner.cancel()

    def _cleanup(self) -> None:
        for inner in self._inners:
            inner.queue.clear()
        self._downstream = NOOP_SUBSCRIBER  # rule 3.13

    def _terminate(self, error: BaseException | None) -> None:
        d = self._downstream
        self._cancelled = True
        self._cancel_all()
        self._cleanup()
        if error is None:
            d.on_complete()
        else:
            d.on_error(error)

    def _emit_rows(self, k: int) -> int:
        """Emit ``k`` rows (every queue holds at least ``k`` elements and the demand allows them):
        each queue's run is popped in one C-level call and replenished once. A batch-capable
        downstream gets the rows in one call (the zipper mapped over the columns in C; rows before
        a failing or ``None``-returning zipper still go out, then the error), any other one row by
        row, the zipper called per row as it is emitted (never ahead of a one-by-one consumer),
        stopping at a cancel or an error. The drain delivers errors; returns the rows emitted."""
        inners = self._inners
        cols = [pop_run(inner.queue, k) for inner in inners]
        zipper = self._zipper
        err: BaseException | None = None
        m = 0
        on_batch = batch_sink(self._downstream)  # looked up per run: the one-by-one path never pays
        if on_batch is not None:
            if zipper is None:
                out: list[Any] = list(builtins.zip(*cols, strict=True))  # k each
            else:
                out = []
                try:
                    # C-level: the zipper over the columns, stopping right after a None (never
                    # called past it); list.extend keeps the rows before a failure
                    out.extend(takewhile(_not_none, map(zipper, *cols)))
                except Exception as ex:
                    err = ex
                if err is None and len(out) < k:
                    err = none_result_error("zip", "the zipper")
            m = len(out)
            if m:
                on_batch(out)
        else:
            on_next = self._downstream.on_next
            error = self._error
            for row in builtins.zip(*cols, strict=True):
                if zipper is not None:
                    try:
                        v = zipper(*row)
                    except Exception as ex:
                        err = ex
                        break
                    if v is None:
                        err = none_result_error("zip", "the zipper")
                        break
                    on_next(v)
                else:
                    on_next(row)
                m += 1
                if self._cancelled or error._value is not None:
                    break  # the downstream cancelled or made a bad request (rule 3.9) meanwhile
        if err is not None and not self._cancelled:
            # a downstream that cancelled within the run never asked for the failing row
            if not self._error.compare_and_set(None, err):
                plugins.on_error(err, "zip: zipper error after termination")
        for inner in inners:
            inner.replenish(k)
        return m

    def drain(self) -> None:
        if not enter(self._wip):
            return
        missed = 1
        inners = self._inners
        requested = self._requested
        zipper = self._zipper
        while True:
            r = requested.get()
            e = 0
            while True:
                if self._cancelled:
                    self._cleanup()
                    return
                err = self._error.get()
                if err is not None:
                    self._terminate(err)
                    return
                k = r - e  # rows the demand allows (rule 1.1); unbounded: as many as are queued
                for inner in inners:
                    done = inner.done  # read before the queue (race: last on_next vs on_complete)
                    n = len(inner.queue)
                    if not n:
                        if done:
                            self._terminate(None)  # no row can ever be completed again
                            return
                        k = 0
                    else:
                        if n < k:
                            k = n
                        n = inner.until_replenish()  # a run ends where a replenish goes out
                        if n < k:
                            k = n
                if k <= 0:
                    break
                if k > 1:
                    e += self._emit_rows(k)  # a run of rows: columns popped in C
                    continue  # an error or a cancel from the run is seen at the top of the loop
                row = tuple([inner.queue.popleft() for inner in inners])
                if zipper is not None:
                    try:
                        v = zipper(*row)
                    except Exception as ex:
                        if self._error.compare_and_set(None, ex):
                            continue  # delivered at the top of the loop
                        plugins.on_error(ex, "zip: zipper error after termination")
                        return
                    if v is None:
                        ex2 = none_result_error("zip", "the zipper")
                        if self._error.compare_and_set(None, ex2):
                            continue
                        return
                    self._downstream.on_next(v)
                else:
                    self._downstream.on_next(row)
                e += 1
                for inner in inners:
                    inner.replenish(1)
            if e and r < MAX_DEMAND:
                produced(requested, e)
            missed = leave(self._wip, missed)
            if missed == 0:
                return


@final
class _ZipFlowable(Flowable[Any]):
    __slots__ = ("_sources", "_zipper", "_prefetch")

    def __init__(self, sources: tuple[Flowable[Any], ...], zipper: Callable[..., Any] | None, prefetch: int) -> None:
        self._sources = sources
        self._zipper = zipper
        self._prefetch = prefetch

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        c = _ZipCoordinator(subscriber, self._zipper, len(self._sources), self._prefetch)
        subscriber.on_subscribe(c)
        c.subscribe_all(self._sources)


def _zip_fusion(fusions: list[Fusion[Any]], zipper: Callable[..., Any] | None) -> Fusion[Any]:
    sizers = [f.sizer for f in fusions]

    def make() -> Iterator[Any]:
        # rule 2.13 per input, before a row is formed: a None from a source fails as the unfused
        # zip's inner does, naming that source, and never reaches the zipper or a row
        return builtins.zip(*[none_checked(f.factory(), f) for f in fusions], strict=False)

    sizer: Sizer | None = None
    if all(s is not None for s in sizers):
        known: list[Sizer] = [s for s in sizers if s is not None]

        def smallest() -> int | None:
            vals = [s() for s in known]
            if any(v is None for v in vals):
                return None
            return min(v for v in vals if v is not None)

        sizer = smallest
    producers: tuple[str, ...] = ()
    for f in fusions:
        producers += f.producers
    # a root: the unfused zip prefetches its inputs, so rows may be pulled ahead
    root: Fusion[Any] = Fusion(make, sizer, producers, ("zip",), pure=all(f.pure for f in fusions))
    if zipper is None:
        return root
    # The zipper is a user stage over the root of rows: the driver may pull rows ahead (the
    # unfused zip prefetches its inputs) but never calls the zipper for a row nobody requested.
    zf = zipper
    return root.then(lambda it: starmap(zf, it), "zip", sizer, produces=True)


def zip_(*sources: Any, prefetch: int = DEFAULT_PREFETCH) -> Flowable[Any]:
    zipper: Callable[..., Any] | None = None
    srcs = list(sources)
    if srcs and not callable(getattr(srcs[-1], "subscribe", None)) and callable(srcs[-1]):
        zipper = srcs.pop()
    flows = tuple(as_flowable("zip", s) for s in variadic_sources(tuple(srcs)))  # zip([a, b]): zip(Iterable, zipper)
    positive_int("zip", "prefetch", prefetch)
    if not flows:
        from ..sources._basic import empty

        return empty()
    fusions = [f._fused() for f in flows]
    if all(fz is not None for fz in fusions):
        return FusedFlowable(_zip_fusion([fz for fz in fusions if fz is not None], zipper))
    return _ZipFlowable(flows, zipper, prefetch)
