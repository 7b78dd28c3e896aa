"""Blocking bridges: blocking_iterable, blocking_first, blocking_last, blocking_subscribe, to_future.

Fast paths: over a fused synchronous chain (``source._fused()`` is not None) the bridges pull the
chain's builtin iterator directly on the calling thread: no subscription, no thread, no lock.
Fused and unfused runs give the same results (a ``None`` element is blamed on the same operator).

Otherwise a subscriber hands elements to the calling thread through a bounded deque:

* ``blocking_iterable(prefetch)`` requests ``prefetch`` upfront; then, once the runs consumed since
  the last replenish hold at least ``limit = prefetch - prefetch//4`` elements, it requests what
  they hold (replenishing, seed 004): only what was consumed is asked for again, so at most
  ``prefetch`` elements are ever requested and not consumed (rule 1.1). A batch from a boundary
  (``on_next_batch``) is queued as one entry, its list neither copied nor modified; single
  elements are queued as they come. The consumer takes what is queued as runs
  (``_QueueSubscriber.next_run``): a batch's list whole (never cut: it is within what was
  requested), or single elements gathered up to the replenish point (one by one, the requests
  are RxJava's: ``prefetch``, then ``limit`` each time). A run is served from a local list: no
  lock, no pop and no accounting per element, one per run; the iterator and ``for_each`` send
  the replenish once the run was consumed, ``next()`` before returning its last element, so
  queue and run hold ``prefetch`` at most.
  Departure from RxJava's ``BlockingFlowableIterable``, which requests ``limit`` at the
  ``limit``-th element, cutting a batch there: a batch that crosses that point is consumed whole
  and then replenished by its size (observe_on's policy here). Over a boundary that answers each
  request with one batch this makes the hand-offs ``prefetch`` elements each instead of ``limit``
  (128 instead of 96 by default), a quarter fewer thread switches, the dominant cost of the
  boundary; the early request of the 75% policy lets the producer work while the consumer takes
  the rest of its batch, an overlap that with the GIL cannot run in parallel anyway.
  A synchronous upstream emits on the consumer's own thread from inside ``request``. The consumer
  parks only when the queue is empty, on a raw lock used as a one-permit semaphore (no
  ``threading.Condition``: no waiter lock allocated per wait, no waiter list); the producer
  takes the guard lock only when the consumer said it is parked, and only the side that lowers
  the ``_waiting`` flag under that lock releases the permit (race: "consumer about to park" vs
  "producer appends": the consumer raises the flag before it re-checks the queue, under the
  lock; without the GIL the producer reads the flag under the lock too; a ``_WAIT_SLICE``
  backstop re-checks anyway).
* The stream's error is raised at the point it is reached (after the elements before it).
* ``iter(it)`` is an ``itertools.chain`` over a generator of runs: an element is one C-level step
  of the run's list iterator; the generator runs once per run (it replenishes there).
* Leaving early cancels: ``close()`` (it empties the current run's iterator, so the loop stops
  at the next element), ``break`` out of ``for x in it`` (the chain is dropped, and its runs
  generator's ``try/finally`` cancels), an exception in the loop body, or garbage collection
  (``__del__``).

``blocking_iterable(timeout=t)`` waits at most ``t`` seconds for each element (and for the end): a
longer wait cancels the subscription and raises ``TimeoutError`` from ``next()``, like RxJava's
``timeout(t)`` per element (an element already buffered is never waited for; a synchronous source
runs on the calling thread and is not interrupted). ``blocking_for_each(timeout=t)`` bounds its
waits the same way, on the calling thread (no timer thread); the time its ``fn`` takes is not counted.

``blocking_first``/``blocking_last`` wait on a ``threading.Event`` (set once per stream); with
``timeout`` they cancel and raise ``TimeoutError`` (``timeout=math.inf``, or anything above
``threading.TIMEOUT_MAX``, means no deadline; NaN is refused). The timeout bounds the wait for signals from
other threads: a synchronous source runs on the calling thread, inside ``subscribe`` (the fused
``blocking_last`` also checks the deadline once per chunk of 4096 elements). ``blocking_subscribe`` runs the callbacks on the
calling thread, so their exceptions (``on_complete``'s and ``on_error``'s too) are raised there. ``to_future`` returns a ``concurrent.futures.Future`` whose ``cancel()`` cancels the
subscription.

Called on a thread that runs an event loop, the blocking bridges subscribe with that loop hidden,
so asyncio sources and operators run on the background loop instead of deadlocking on the loop the
caller blocks (``await flowable`` is the non-blocking way there).
"""

from __future__ import annotations

import concurrent.futures
import operator
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator
from itertools import chain, islice, repeat
from typing import Any, Final, Generic, NoReturn, Self, TypeVar, final

from ..._internal import plugins
from ..._internal.arguments import positive_int
from ..._internal.atomics import SEQUENTIAL_ATTRIBUTES, AtomicFlag, AtomicRef
from ..._internal.requests import MAX_DEMAND
from ..._internal.subscriptions import CANCELLED, cancel, set_once
from ..._spec import Subscription, null_element_message
from ...errors import MissingBackpressureError, NoneElementError, NoSuchElementError
from .._enums import NOTSET
from .._flowable import Flowable
from .._fused import Fusion

__all__ = ["blocking_iterable", "blocking_first", "blocking_last", "blocking_subscribe", "to_future"]

T = TypeVar("T")

_END: Final = object()
_WAIT_SLICE: Final = 0.5  # backstop for a lost wake-up without the GIL; never reached with it
_CHUNK: Final = 4096
_is = operator.is_
# without the GIL the producer reads the consumer's _waiting flag under the lock (see _wake_waiting)
_LOCKED_WAKE: Final = not SEQUENTIAL_ATTRIBUTES



def _check_timeout(name: str, timeout: object) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise TypeError(f"{name}(): timeout must be a number of seconds or None, got {timeout!r}")
    if not timeout >= 0:  # NaN too: it would time out at once
        raise ValueError(f"{name}(): timeout must be >= 0 seconds or None, got {timeout!r}")
    if timeout > threading.TIMEOUT_MAX:  # inf, 1e300: no deadline (Event.wait would overflow)
        return None
    return float(timeout)


def _has_none(chunk: list[Any]) -> bool:
    return any(map(_is, chunk, repeat(None)))


def _subscribe_blocking(source: Flowable[T], sub: Any) -> None:
    """Subscribe for a caller that is about to block. On a thread that runs an event loop, that
    loop is hidden for the ``subscribe`` call, so the asyncio sources and operators (which use the
    subscribing thread's running loop) run on the background loop: on the blocked loop their
    coroutines would never run, a deadlock. asyncio not imported yet: no loop can be running."""
    events = sys.modules.get("asyncio.events")
    loop = events._get_running_loop() if events is not None else None
    if events is None or loop is None:
        source.subscribe(sub)
        return
    from ..._internal.event_loops import set_hidden_by_blocking_bridge

    events._set_running_loop(None)  # thread-local: this thread only, restored right after
    set_hidden_by_blocking_bridge(loop)  # a source bound to this very loop can say it would hang
    try:
        source.subscribe(sub)
    finally:
        set_hidden_by_blocking_bridge(None)
        events._set_running_loop(loop)


def _none_argument(sub: Any, where: str) -> NoReturn:
    """Rule 2.13 for the bridges' subscribers: ``None`` as an element, error or Subscription is
    answered with TypeError to the caller; the stream is broken, so the upstream is cancelled and
    the waiting consumer gets a TypeError too (never a ``None`` element, never a hang)."""
    cancel(sub._upstream)
    sub.on_error(NoneElementError(null_element_message(where, "2.13")))
    raise NoneElementError(null_element_message(where, "2.13"))


# ---------------------------------------------------------------------------------------------
# The queue subscriber (blocking_iterable, blocking_for_each, blocking_subscribe)


@final
class _Chunk:
    """A batch queued as one entry by ``on_next_batch``. Its list is only read, never modified:
    the producer that handed it over may still look at it (the fused driver takes its ``len``)."""

    __slots__ = ("items",)

    def __init__(self, items: list[Any]) -> None:
        self.items = items


_EXHAUSTED: Final[Iterator[Any]] = iter(())  # an empty run (an exhausted iterator stays exhausted)


@final
class _QueueSubscriber(Generic[T]):
    """Buffers at most ``prefetch`` elements for one consuming thread, which takes them as runs."""

    _rs_no_wrap = True
    __slots__ = (
        "_queue",
        "_upstream",
        "_prefetch",
        "_limit",
        "_consumed",
        "_in",
        "_granted",
        "_run",
        "_held",
        "_done",
        "_error",
        "_lock",
        "_wake",
        "_waiting",
        "_cancelled",
        "_name",
        "__weakref__",
    )

    def __init__(self, prefetch: int, name: str = "blocking_iterable") -> None:
        # SPSC: the upstream appends elements and _Chunk entries, the consumer pops
        self._queue: deque[Any] = deque()
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: cancel vs on_subscribe
        self._prefetch = prefetch
        self._limit = prefetch - (prefetch >> 2)
        self._in = 0  # elements queued so far (the upstream's thread only: rule 1.3)
        # everything requested so far (the consumer's thread writes it; the upstream reads it for the
        # rule 1.1 check: it is written before the request that lets the upstream emit more, so it is
        # never read stale there); what was handed out as runs does not count, only what was asked
        self._granted = prefetch
        self._consumed = 0  # elements handed out since the last replenish
        self._run: Iterator[T] = _EXHAUSTED  # poll's current run
        self._held: Any = _END  # poll: the run's last element, returned after its replenish
        self._done = False
        self._error: BaseException | None = None
        self._lock = threading.Lock()  # guards _waiting and the release of the permit
        # the consumer's parking spot: a one-permit semaphore, released by whoever lowers _waiting
        # under _lock (so at most one permit exists, and _wait takes it before it returns)
        self._wake = threading.Lock()
        self._wake.acquire()
        self._waiting = False  # raised by the consumer under _lock; lowered by it or by a waker
        self._cancelled = False  # cancel() from any thread; the consumer drops the buffer itself
        self._name = name  # the bridge named in errors (blocking_iterable, blocking_for_each...)

    # -- Subscriber -----------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            _none_argument(self, "on_subscribe")
        if set_once(self._upstream, subscription, "blocking_iterable"):
            subscription.request(self._prefetch)

    def _overflow(self) -> None:
        cancel(self._upstream)
        self.on_error(
            MissingBackpressureError(
                f"{self._name}(prefetch={self._prefetch}): the upstream emitted more than "
                "requested (rule 1.1)"
            )
        )

    def on_next(self, item: T) -> None:
        if item is None:
            _none_argument(self, "on_next")
        if self._done or self._cancelled:
            return  # rule 2.8: late elements after a cancel are dropped
        n = self._in
        if n >= self._granted:
            self._overflow()
            return
        self._in = n + 1
        self._queue.append(item)
        if self._waiting or _LOCKED_WAKE:  # the consumer sleeps: wake it (one lock per wake-up)
            self._wake_waiting()

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch hand-off: the list is queued as one entry (never copied, never
        modified), with at most one wake-up per batch."""
        if self._done or self._cancelled or not items:
            return  # rule 2.8: late elements after a cancel are dropped
        n = self._in + len(items)
        if n > self._granted:
            for x in items:  # the one-by-one path delivers what fits, then signals rule 1.1
                self.on_next(x)
                if self._done:
                    return
            return
        self._in = n
        self._queue.append(_Chunk(items))
        if self._waiting or _LOCKED_WAKE:
            self._wake_waiting()

    def on_error(self, error: BaseException) -> None:
        if error is None:
            _none_argument(self, "on_error")
        if self._done:
            plugins.on_error(error, "blocking bridge: on_error after termination")
            return
        if self._cancelled:  # the consumer left (close/break/timeout): nobody will raise it
            self._done = True
            plugins.on_error(error, "blocking bridge: on_error after the consumer cancelled")
            return
        self._upstream.set(CANCELLED)  # rule 2.4: terminated, so the consumer's final cancel is a no-op
        self._error = error
        self._done = True  # after _error: the consumer reads _done first
        self._signal()

    def on_complete(self) -> None:
        self._upstream.set(CANCELLED)  # rule 2.4: no cancel reaches a completed upstream
        self._done = True
        self._signal()

    def _wake_waiting(self) -> None:
        # race: "consumer about to park" vs "producer queues": the consumer raises _waiting and
        # then re-checks the queue under _lock, so a producer that finds _waiting down under the
        # lock queued before that re-check. With the GIL an unlocked read of _waiting is enough
        # to skip the lock (sequentially consistent attributes); without it the read is locked.
        # Only the side that lowers the flag releases the permit: never two permits.
        with self._lock:
            if self._waiting:
                self._waiting = False
                self._wake.release()

    # terminal signals and cancel set their flag first, then wake a parked consumer (same race)
    _signal = _wake_waiting

    # -- consumer side --------------------------------------------------------------------------
    def cancel(self) -> None:
        """Any thread: cancel the upstream and end the iteration; a consumer blocked in
        :meth:`next_run` wakes up and ends. The buffer is not touched here: it has one reader, the
        consumer, which drops it (rule 3.13) when it sees the cancel."""
        self._cancelled = True
        cancel(self._upstream)
        self._signal()

    def _drop(self) -> None:
        """Consumer thread, after a cancel: rule 3.13, the buffer is dropped."""
        self._queue.clear()
        self._run = _EXHAUSTED
        self._held = _END

    def replenish(self) -> None:
        """Consumer thread, once the runs handed out since the last replenish, all consumed, hold at
        least ``limit`` elements: requests that many again (never more than was consumed)."""
        n = self._consumed
        self._consumed = 0
        s = self._upstream._value  # a plain read (see atomics)
        if s is not None:
            self._granted += n  # before the request: what it lets in is within it
            s.request(n)  # a synchronous upstream refills the queue here

    def next_run(self, timeout: float | None = None) -> list[T] | None:
        """Consumer thread: the next buffered elements as one list (the caller only reads it): a
        queued batch whole, or the single elements queued, at most ``limit - consumed`` of them (a
        run of singles ends where a replenish is due); its elements count as consumed. The caller
        calls :meth:`replenish` when ``_consumed >= _limit`` once it handed the run out, so queue
        and run never hold more than ``prefetch`` (rule 1.1).
        ``None`` on completion or cancel; raises the stream's error once the elements before it
        were handed out. Blocks when nothing is buffered, at most ``timeout`` seconds when given:
        then cancels and raises ``TimeoutError``."""
        q = self._queue
        if self._run is not _EXHAUSTED and not self._cancelled:
            # what poll took but did not return yet (next() first, then a loop)
            run = list(self._run)
            self._run = _EXHAUSTED
            if self._held is not _END:
                run.append(self._held)
                self._held = _END
            if run:
                return run  # counted as consumed when poll took it
        while True:
            if self._cancelled:
                self._drop()
                return None
            done = self._done  # read before the queue: nothing is queued after done
            if q:  # single consumer: a non-empty deque stays non-empty until we pop
                e = q.popleft()
                if type(e) is _Chunk:  # a batch is never cut (it is within what was requested)
                    run = e.items
                    k = len(run)
                else:  # elements queued one by one: taken together up to the replenish point
                    run = [e]
                    k = 1
                    m = self._limit - self._consumed
                    while k < m and q and type(q[0]) is not _Chunk:
                        run.append(q.popleft())
                        k += 1
                self._consumed += k
                return run
            if done:
                err = self._error
                if err is not None:
                    self._error = None
                    raise err
                return None
            self._wait(timeout)

    def _wait(self, timeout: float | None) -> None:
        """Consumer thread: park until something is queued, the stream ends or is cancelled.
        On return (a KeyboardInterrupt included) ``_waiting`` is down and no permit is left."""
        q = self._queue
        lock = self._lock
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                with lock:
                    self._waiting = True  # before the re-check: see _wake_waiting
                    if q or self._done or self._cancelled:
                        self._waiting = False  # under the lock: no waker lowered it, no permit was released
                        return
                if deadline is None:
                    wait_s = _WAIT_SLICE  # the slice: a backstop, never reached
                else:
                    wait_s = min(deadline - time.monotonic(), _WAIT_SLICE)
                    if wait_s <= 0:
                        self._unpark()
                        break
                if self._park(wait_s):
                    return  # the waker lowered _waiting and released the permit: taken
                self._unpark()
        except BaseException:  # KeyboardInterrupt while parked: leave no flag, no permit behind
            self._unpark()
            raise
        if not q and not self._done and not self._cancelled:
            # timed out with nothing to take (an element that raced in is taken instead)
            self.cancel()
            self._drop()
            raise TimeoutError(f"{self._name}(): no element within {timeout} s; the subscription was cancelled")

    def _park(self, wait_s: float) -> bool:
        """Consumer thread, ``_waiting`` raised: sleep until a waker releases the permit (True) or
        ``wait_s`` seconds passed (False)."""
        return self._wake.acquire(True, wait_s)

    def _unpark(self) -> None:
        """Consumer thread, after a park that was not woken: lower ``_waiting`` and take the permit
        of a waker that lowered it meanwhile, if any (it released it under the lock)."""
        with self._lock:
            self._waiting = False
            self._wake.acquire(False)

    def poll(self, timeout: float | None = None) -> Any:
        """Consumer thread: the next element, or ``_END`` on completion or cancel; raises the
        stream's error; blocks as :meth:`next_run` does. The replenish due at an element goes out
        before that element is returned (``BlockingIterator.__next__`` takes the current run's
        elements from ``_run`` directly and comes here when it is exhausted)."""
        if self._cancelled:
            self._drop()
            return _END
        for x in self._run:
            return x
        held = self._held
        if held is not _END:
            self._held = _END
            self.replenish()
            return held
        if self._consumed >= self._limit:
            # everything handed out was consumed (a run of ``iter()``'s chain that next() emptied
            # inside the loop): the replenish that chain owes goes out here, or the wait below
            # would never end
            self.replenish()
        run = self.next_run(timeout)
        if run is None:
            return _END
        if self._consumed >= self._limit:  # a replenish is due once this run is handed out
            n = len(run)
            if n == 1:
                self.replenish()
                return run[0]
            self._held = run[-1]  # returned after the replenish, the others before it
            it: Iterator[T] = islice(run, n - 1)
        else:
            it = iter(run)
        self._run = it
        return next(it)


# ---------------------------------------------------------------------------------------------
# blocking_iterable


@final
class _Elements(chain[T]):
    """``iter(blocking_iterator)``: ``itertools.chain.from_iterable`` over its runs generator, plus
    a generator's ``close()``: it closes that generator, whose ``finally`` cancels."""

    __slots__ = ("_runs",)

    _runs: Generator[Iterator[T], None, None]

    def close(self) -> None:
        self._runs.close()


class ClosedOnExit:
    """The blocking bridges' lifetime: ``with`` closes them, and so does the garbage collector
    (never raising from the finalizer); ``close()`` cancels the subscription."""

    __slots__ = ()

    def close(self) -> None:  # pragma: no cover - always overridden
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass


class BlockingIterator(ClosedOnExit, Generic[T]):
    """An iterator over a Flowable's elements; ``close()`` (or leaving a ``for`` loop) cancels."""

    __slots__ = (
        "_source",
        "_prefetch",
        "_timeout",
        "_sub",
        "_it",
        "_fusion",
        "_started",
        "_closed",
        "_active",
        "_name",
        "__weakref__",
    )

    def __init__(
        self, source: Flowable[T], prefetch: int, timeout: float | None = None, name: str = "blocking_iterable"
    ) -> None:
        self._source = source
        self._name = name  # the bridge named in errors
        self._prefetch = prefetch
        self._timeout = timeout  # the longest wait for one element (None: no limit)
        self._sub: _QueueSubscriber[T] | None = None
        self._it: Iterator[T] | None = None
        self._fusion: Fusion[T] | None = None
        self._started = False
        self._closed = False
        self._active: Iterator[T] = _EXHAUSTED  # the run the chain of __iter__ takes (close() empties it)

    def _start(self) -> None:
        self._started = True
        fz = self._source._fused()
        if fz is not None:
            self._fusion = fz
            self._it = fz.factory()
            return
        sub: _QueueSubscriber[T] = _QueueSubscriber(self._prefetch, self._name)
        self._sub = sub
        _subscribe_blocking(self._source, sub)

    def __iter__(self) -> _Elements[T]:
        """The elements as an ``itertools.chain`` over the runs :meth:`_runs` yields: an element is
        one C-level step of a list iterator (no generator resume, no Python code per element).
        Closing it, or dropping it (``break``, an exception in the loop body, garbage collection),
        finalizes that generator, whose ``finally`` cancels."""
        runs = self._runs()
        elements: _Elements[T] = _Elements.from_iterable(runs)  # type: ignore[assignment]
        elements._runs = runs
        return elements

    def _runs(self) -> Generator[Iterator[T], None, None]:
        """The runs ``__iter__`` chains, each a list iterator over a list handed over whole (no
        per-element lock, pop or accounting). The chain asks for the next run once a run was
        consumed: the replenish due goes out then, so queue + run never hold more than
        ``prefetch`` (rule 1.1). ``close()`` empties the current run's iterator, so the chain
        stops at the next element."""
        try:
            if self._closed:
                return
            if not self._started:
                self._start()
            it = self._it
            if it is not None:  # fused synchronous chain: pull its builtin iterator directly
                yield self._fused_elements(it)
                return
            sub = self._sub
            if sub is None:
                return
            next_run = sub.next_run
            lim = sub._limit
            timeout = self._timeout
            while True:
                run = next_run(timeout)  # blocks; raises the stream's error or TimeoutError
                if run is None:
                    return
                active = iter(run)
                # next() inside the loop takes the following elements from this same run (poll's
                # _run), in order
                sub._run = active
                # race: close() from another thread vs a new run: close() raises _closed, then
                # empties the _active it reads; this side stores _active, then reads _closed
                self._active = active
                if self._closed:
                    return
                yield active
                if self._closed:
                    return
                if sub._run is active:  # else next() took a run meanwhile: next_run hands its rest out
                    sub._run = _EXHAUSTED
                    if sub._consumed >= lim:
                        sub.replenish()  # a synchronous upstream refills the queue here
        finally:
            self._active = _EXHAUSTED
            self.close()

    def _fused_elements(self, it: Iterator[T]) -> Generator[T, None, None]:
        fz = self._fusion
        for x in it:
            if x is None:
                raise fz.none_error() if fz is not None else NoneElementError(null_element_message("on_next"))
            yield x
            if self._closed:
                return

    def for_each(self, fn: Callable[[T], Any]) -> None:
        """Call ``fn`` for every element on this thread; the batch consumer behind
        ``blocking_for_each`` and ``blocking_subscribe``. What is buffered is taken in one local
        loop (one ``fn`` call per element, no generator resume), replenishing by ``limit`` as the
        one-by-one path does (rule 1.1). A cancel (``close()`` from any thread) stops it at the next
        element; an exception from ``fn`` cancels and propagates (as the stream's error does). The
        iterator is closed on return."""
        try:
            if self._closed:
                return
            if not self._started:
                self._start()
            it = self._it
            if it is not None:  # fused synchronous chain: pull its builtin iterator directly
                fz = self._fusion
                for x in it:
                    if x is None:
                        raise (
                            fz.none_error()
                            if fz is not None
                            else NoneElementError(null_element_message("on_next"))
                        )
                    fn(x)
                    if self._closed:
                        return
                return
            sub = self._sub
            if sub is None:
                return
            next_run = sub.next_run
            lim = sub._limit
            timeout = self._timeout
            while True:
                run = next_run(timeout)  # blocks (fn's time is not counted); raises the stream's error
                if run is None:
                    return
                for x in run:
                    if sub._cancelled:  # close() from any thread: stop at this element
                        return
                    fn(x)
                if sub._consumed >= lim:
                    sub.replenish()
        finally:
            self.close()

    def __next__(self) -> T:
        sub = self._sub
        if sub is not None:  # started, not closed (close() clears it first)
            for x in sub._run:  # the current run, consumer thread only: no lock, no accounting
                return x
            try:
                v = sub.poll(self._timeout)  # the next run; the replenish due goes out here
            except BaseException:
                self.close()
                raise
            if v is _END:
                self.close()
                raise StopIteration
            return v  # type: ignore[no-any-return]
        if self._closed:
            raise StopIteration
        if not self._started:
            try:
                self._start()
            except BaseException:
                self.close()
                raise
            if self._sub is not None:
                return self.__next__()
        it = self._it
        if it is not None:
            try:
                x = next(it)
            except StopIteration:
                self.close()
                raise
            except BaseException:
                self.close()
                raise
            if x is None:
                self.close()
                fz = self._fusion
                raise fz.none_error() if fz is not None else NoneElementError(null_element_message("on_next"))
            return x
        raise StopIteration

    def close(self) -> None:
        """Stop iterating and cancel the subscription (idempotent). From another thread too: a
        consumer blocked waiting for an element wakes up and its iteration ends."""
        self._closed = True
        self._it = None
        active = self._active
        if active is not _EXHAUSTED:  # the chain of __iter__ stops at the next element
            self._active = _EXHAUSTED
            deque(active, maxlen=0)
        sub = self._sub
        if sub is not None:
            self._sub = None
            sub.cancel()



def blocking_iterable(source: Flowable[T], prefetch: int, timeout: float | None = None) -> BlockingIterator[T]:
    positive_int("blocking_iterable", "prefetch", prefetch)
    return BlockingIterator(source, prefetch, _check_timeout("blocking_iterable", timeout))


# ---------------------------------------------------------------------------------------------
# blocking_first / blocking_last


@final
class _EventSubscriber(Generic[T]):
    """Records the first (``first=True``) or last element, then sets an Event on termination."""

    _rs_no_wrap = True
    __slots__ = ("_first", "_upstream", "_value", "_error", "_event", "_once", "__weakref__")

    def __init__(self, first: bool) -> None:
        self._first = first
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)
        self._value: Any = _END
        self._error: BaseException | None = None
        self._event = threading.Event()  # set once per stream; its lock publishes _value/_error
        # race: the result-deciding signal (first element, terminal) vs the waiter's timeout: the
        # one that sets it decides; a signal that loses goes to the plugins, never silently
        self._once = AtomicFlag()

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            _none_argument(self, "on_subscribe")
        if set_once(self._upstream, subscription, "blocking_first/last"):
            subscription.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if item is None:
            _none_argument(self, "on_next")
        if self._first:
            if self._value is _END and self._once.try_set():
                self._value = item
                cancel(self._upstream)
                self._event.set()
        else:
            self._value = item

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch hand-off: the first element, or the batch's last, in one step."""
        if items:
            if self._first:
                self.on_next(items[0])  # it cancels: the rest of the batch is never looked at
            else:
                self._value = items[-1]

    def on_error(self, error: BaseException) -> None:
        if error is None:
            _none_argument(self, "on_error")
        if not self._once.try_set():
            plugins.on_error(
                error, "blocking_first/last: on_error after the result was taken or the wait timed out"
            )
            return
        self._upstream.set(CANCELLED)  # rule 2.4
        self._error = error
        self._event.set()

    def on_complete(self) -> None:
        if self._once.try_set():
            self._upstream.set(CANCELLED)  # rule 2.4
            self._event.set()

    def cancel(self) -> None:
        cancel(self._upstream)

    def result(self, name: str, default: Any, timeout: float | None) -> Any:
        try:
            if not self._event.wait(timeout):
                if self._once.try_set():  # the timeout wins: later signals go to the plugins
                    self.cancel()
                    raise TimeoutError(
                        f"{name}(): no result within {timeout} s; the subscription was cancelled"
                    )
                self._event.wait()  # a signal won just now: it sets the event right after
        except BaseException:
            # e.g. KeyboardInterrupt while waiting: the waiter is gone, so take the decision (a
            # later error then goes to the plugins instead of being stored for nobody) and cancel
            self._once.try_set()
            self.cancel()
            raise
        err = self._error
        if err is not None:
            raise err
        return _result(name, self._value, default)


def _result(name: str, value: Any, default: Any) -> Any:
    if value is _END:
        if default is NOTSET:
            raise NoSuchElementError(
                f"{name}(): the stream completed without elements and no default was given"
            )
        return default
    return value


def blocking_first(source: Flowable[T], default: Any, timeout: float | None) -> T:
    t = _check_timeout("blocking_first", timeout)
    fz = source._fused()
    if fz is not None:
        x = next(fz.factory(), _END)  # synchronous: no thread, no subscription
        if x is None:
            raise fz.none_error()
        return _result("blocking_first", x, default)  # type: ignore[no-any-return]
    sub: _EventSubscriber[T] = _EventSubscriber(True)
    _subscribe_blocking(source, sub)
    return sub.result("blocking_first", default, t)  # type: ignore[no-any-return]


def blocking_last(source: Flowable[T], default: Any, timeout: float | None) -> T:
    t = _check_timeout("blocking_last", timeout)
    fz = source._fused()
    if fz is not None:
        it = fz.factory()
        last: Any = _END
        deadline = None if t is None else time.monotonic() + t
        while True:
            chunk = list(islice(it, _CHUNK))  # the fold runs in C, the None check per chunk
            if not chunk:
                break
            if _has_none(chunk):
                raise fz.none_error()
            last = chunk[-1]
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"blocking_last(): no result within {t} s (the source was abandoned)")
        return _result("blocking_last", last, default)  # type: ignore[no-any-return]
    sub: _EventSubscriber[T] = _EventSubscriber(False)
    _subscribe_blocking(source, sub)
    return sub.result("blocking_last", default, t)  # type: ignore[no-any-return]


def blocking_single(source: Flowable[T], default: Any, timeout: float | None) -> T:
    """RxJava ``blockingSingle``: the only element; empty -> ``default`` or NoSuchElementError;
    a second element -> ValueError (the source is cancelled at the second element)."""
    t = _check_timeout("blocking_single", timeout)
    items: list[Any] = blocking_last(source.take(2).to_list(), NOTSET, t)
    if len(items) > 1:
        raise ValueError("blocking_single(): the stream has more than one element")
    return _result("blocking_single", items[0] if items else _END, default)  # type: ignore[no-any-return]


def blocking_for_each(
    source: Flowable[T], fn: Callable[[T], Any], prefetch: int, timeout: float | None = None
) -> None:
    """RxJava ``blockingForEach``: ``fn`` runs on the calling thread for each element; a raising
    ``fn`` cancels the subscription and the exception propagates; a stream error is raised.
    ``timeout`` bounds each wait for an element (and for the end) as ``blocking_iterable``'s does:
    the wait runs on the calling thread (no timer thread), and a longer one cancels the upstream
    and raises ``TimeoutError``; the time ``fn`` takes is not counted."""
    if not callable(fn):
        raise TypeError(f"blocking_for_each(): fn must be callable, got {type(fn).__name__}")
    positive_int("blocking_for_each", "prefetch", prefetch)
    t = _check_timeout("blocking_for_each", timeout)
    # batches taken in one loop; for_each closes the iterator (a cancel) on every way out
    BlockingIterator(source, prefetch, t, "blocking_for_each").for_each(fn)


# ---------------------------------------------------------------------------------------------
# blocking_subscribe


def blocking_subscribe(
    source: Flowable[T],
    on_next: Callable[[T], Any] | None,
    on_error: Callable[[BaseException], Any] | None,
    on_complete: Callable[[], Any] | None,
) -> None:
    """Consume on the calling thread. A raising ``on_next`` cancels the upstream and is handled like
    a stream error (``on_error``, or raised when there is none). Every callback runs on the calling
    thread, so an exception from ``on_error`` or ``on_complete`` is raised there too (the stream
    is over by then: there is nothing left to cancel); one from ``on_error`` carries the stream's
    error as its ``__context__``."""
    for name, fn in (("on_next", on_next), ("on_error", on_error), ("on_complete", on_complete)):
        if fn is not None and not callable(fn):
            raise TypeError(f"blocking_subscribe(): {name} must be callable or None")
    it = BlockingIterator(source, 128)
    try:
        # buffered batches go to on_next in one local loop; for_each closes the iterator (a
        # cancel when the upstream still runs) before anything below runs
        it.for_each(on_next if on_next is not None else _ignore)
    except Exception as e:  # the stream's error, or on_next's (the upstream is cancelled by now)
        if on_error is None:
            raise
        on_error(e)  # raises on the caller's thread if it raises
        return
    if on_complete is not None:
        on_complete()


def _ignore(_: object) -> None:
    pass


# ---------------------------------------------------------------------------------------------
# to_future


@final
class _FutureSubscriber(Generic[T]):
    """Completes a Future with the last element; the Future's cancel cancels the subscription."""

    _rs_no_wrap = True
    __slots__ = ("_future", "_upstream", "_value", "__weakref__")

    def __init__(self, future: concurrent.futures.Future[T]) -> None:
        self._future = future
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: cancel vs on_subscribe
        self._value: Any = _END

    def on_future_done(self, future: concurrent.futures.Future[T]) -> None:
        if future.cancelled():
            cancel(self._upstream)

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            _none_argument(self, "on_subscribe")
        if set_once(self._upstream, subscription, "to_future"):
            subscription.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if item is None:
            _none_argument(self, "on_next")
        self._value = item

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch hand-off: only the batch's last element can be the result."""
        if items:
            self._value = items[-1]

    def on_error(self, error: BaseException) -> None:
        if error is None:
            _none_argument(self, "on_error")
        self._upstream.set(CANCELLED)
        try:
            self._future.set_exception(error)
        except concurrent.futures.InvalidStateError:  # completed or cancelled: never silently
            plugins.on_error(error, "to_future(): on_error after the future was completed or cancelled")

    def on_complete(self) -> None:
        self._upstream.set(CANCELLED)
        v = self._value
        self._value = None
        try:
            if v is _END:
                self._future.set_exception(
                    NoSuchElementError("to_future(): the stream completed without elements")
                )
            else:
                self._future.set_result(v)
        except concurrent.futures.InvalidStateError:
            pass  # cancelled meanwhile


def to_future(source: Flowable[T]) -> concurrent.futures.Future[T]:
    fut: concurrent.futures.Future[T] = concurrent.futures.Future()
    sub: _FutureSubscriber[T] = _FutureSubscriber(fut)
    fut.add_done_callback(sub.on_future_done)
    source.subscribe(sub)
    return fut
