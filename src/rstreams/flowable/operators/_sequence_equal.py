"""sequence_equal(a, b, equal, prefetch) (RxJava ``Flowable.sequenceEqual``): one ``bool``, whether
both Publishers emit equal elements, pairwise, in the same order, and the same number of them.

Structure (queue-drain of seed 004, as ``zip``): each source has a bounded inner queue that asks
for ``prefetch`` elements and is replenished with what the drain compared once that is at least
``prefetch - prefetch // 4``; the drain (whoever moves ``wip`` from 0) compares the pairs available on both
sides in one local loop. The answer is decided as early as it can be:

* a pair differs (``equal(x, y)`` is falsy; default ``x is y or x == y``, as RxJava's
  ``Objects.equals``): ``False``;
* one source completed, its queue is empty, and the other has an element (or completed with one
  queued): ``False``;
* both completed with every pair equal: ``True``.

Once decided, both sources are cancelled and the queues dropped (rule 3.13); the answer waits in a
:class:`~rstreams.flowable._scalar.DeferredScalarSubscription` until it is requested. An error from
either source, or from ``equal``, cancels both and is signalled instead (the first one wins; a later
one goes to the undeliverable-error hook). Memory is bounded by ``2 * prefetch`` elements.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.drain import enter, leave
from ..._internal.requests import DEFAULT_PREFETCH
from ..._spec import Subscriber
from .._base import as_flowable
from .._flowable import Flowable
from .._scalar import DeferredScalarSubscription
from ._inner import QueuedInner

__all__ = ["sequence_equal"]

T = TypeVar("T")


@final
class _EqualInner(QueuedInner):
    """A :class:`QueuedInner` whose error is stored before ``done`` is raised (race: a drain on the
    other source's thread that saw ``done`` with an empty queue would take the error for a
    completion, and answer instead of failing)."""

    __slots__ = ()

    def on_error(self, error: BaseException) -> None:
        if self.done:
            plugins.on_error(error, "sequence_equal: a source signalled on_error after terminating")
            return
        self._parent.inner_error(error)
        self.done = True


@final
class _SequenceEqualCoordinator:
    __slots__ = ("_scalar", "_equal", "_a", "_b", "_wip", "_error", "_done")

    def __init__(self, downstream: Subscriber[bool], equal: Callable[[Any, Any], object] | None, prefetch: int) -> None:
        self._scalar: DeferredScalarSubscription[bool] = DeferredScalarSubscription(downstream, self._cancelled)
        self._equal = equal
        self._a = _EqualInner(self, prefetch, "sequence_equal")
        self._b = _EqualInner(self, prefetch, "sequence_equal")
        self._wip = AtomicInt(0)  # queue-drain: one drainer at a time (rule 1.3)
        self._error: AtomicRef[BaseException | None] = AtomicRef(None)  # the first error wins
        self._done = False  # decided, failed or cancelled: the drain only drops the queues

    def subscribe(self, a: Flowable[Any], b: Flowable[Any]) -> None:
        a.subscribe(self._a)
        if not self._done and self._error.get() is None:
            b.subscribe(self._b)

    # -- inner parent protocol ----------------------------------------------------------------
    def inner_error(self, error: BaseException) -> None:
        if self._done or not self._error.compare_and_set(None, error):
            plugins.on_error(error, "sequence_equal: error after the answer, a cancel or a first error")
            return
        self.drain()

    def _cancelled(self) -> None:
        """The downstream cancelled (or made a rule 3.9 bad request): stop both sources."""
        self._done = True
        self._a.cancel()
        self._b.cancel()
        self.drain()  # race: cancel vs a running drain (whoever drains drops the queues)

    def _finish(self, answer: bool | None, error: BaseException | None = None) -> None:
        self._done = True
        self._a.cancel()
        self._b.cancel()
        self._a.queue.clear()
        self._b.queue.clear()
        if error is not None:
            self._scalar.error(error)
        elif answer is not None:
            self._scalar.complete(answer)

    def drain(self) -> None:
        if not enter(self._wip):
            return
        missed = 1
        a = self._a
        b = self._b
        qa = a.queue
        qb = b.queue
        equal = self._equal
        while True:
            while True:
                if self._done:
                    qa.clear()  # rule 3.13: decided or cancelled, nothing more is compared
                    qb.clear()
                    break
                err = self._error.get()
                if err is not None:
                    self._finish(None, err)
                    break
                da = a.done  # read before the queues (race: last on_next vs on_complete)
                db = b.done
                n = min(len(qa), len(qb))
                if n == 0:
                    if da and db and not qa and not qb:
                        self._finish(True)
                    elif (da and not qa and qb) or (db and not qb and qa):
                        self._finish(False)  # one sequence ended, the other has one more
                    break
                popa = qa.popleft
                popb = qb.popleft
                try:
                    if equal is None:
                        for _ in range(n):
                            x = popa()
                            y = popb()
                            if not (x is y or x == y):
                                self._finish(False)
                                break
                    else:
                        for _ in range(n):
                            if not equal(popa(), popb()):
                                self._finish(False)
                                break
                except Exception as e:
                    if self._error.compare_and_set(None, e):
                        continue  # signalled at the top of the loop
                    plugins.on_error(e, "sequence_equal: equal() failed after a first error")
                    continue
                if self._done:
                    continue
                a.replenish(n)
                b.replenish(n)
            missed = leave(self._wip, missed)
            if missed == 0:
                return


@final
class _SequenceEqualFlowable(Flowable[bool]):
    __slots__ = ("_a", "_b", "_equal", "_prefetch")

    def __init__(self, a: Flowable[Any], b: Flowable[Any], equal: Callable[[Any, Any], object] | None, prefetch: int) -> None:
        self._a = a
        self._b = b
        self._equal = equal
        self._prefetch = prefetch

    def _subscribe_actual(self, subscriber: Subscriber[bool]) -> None:
        c = _SequenceEqualCoordinator(subscriber, self._equal, self._prefetch)
        subscriber.on_subscribe(c._scalar)
        c.subscribe(self._a, self._b)


def sequence_equal(
    a: object, b: object, equal: Callable[[Any, Any], object] | None = None, prefetch: int = DEFAULT_PREFETCH
) -> Flowable[bool]:
    fa = as_flowable("sequence_equal", a)
    fb = as_flowable("sequence_equal", b)
    if equal is not None and not callable(equal):
        raise TypeError(f"sequence_equal(): equal must be a callable or None, got {type(equal).__name__}")
    if not isinstance(prefetch, int) or isinstance(prefetch, bool):
        raise TypeError(f"sequence_equal(): prefetch must be an int, got {type(prefetch).__name__}")
    if prefetch <= 0:
        raise ValueError(f"sequence_equal(): prefetch must be > 0, got {prefetch}")
    return _SequenceEqualFlowable(fa, fb, equal, prefetch)
