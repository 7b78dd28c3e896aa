"""The kit's own reference implementations, written with the rules in mind.

* :class:`SyncRangePublisher` - synchronous: signals run on the thread that calls ``request``; the
  recursion ``on_next -> request -> on_next`` is trampolined (a work-in-progress counter: the first
  caller emits, re-entrant callers only add demand), so the depth stays 1 (rule 3.3).
* :class:`ThreadPoolIterablePublisher` - asynchronous: each Subscription drains on a pool of daemon
  threads, one task at a time (the JVM kit's default helper publisher).
* :class:`AsyncioIterablePublisher` - asynchronous on an asyncio event loop running in a background
  thread (or a loop you pass); signals run on the loop thread.
* :class:`SyncSubscriber` / :class:`AsyncSubscriber` - request one element at a time; the async one
  processes signals on a worker thread and serializes its own calls to the Subscription (rule 2.7).
* :class:`IdentityProcessor` - a lock-step multicast identity Processor: an element is emitted when
  every Subscriber has demand (``does_coordinated_emission() == True`` in its verification).

Every publisher here: raises ``TypeError`` for ``subscribe(None)`` (1.9); signals ``on_error`` with
a rule 3.9 error for bad requests (``0``, ``-1``, ``True``, ``1.5``, ``None``), treats
``request(n >= 2**63 - 1)`` as unbounded (3.17); drops its reference to the Subscriber on cancel and
on termination (3.13); rejects a Subscriber that is already subscribed with ``on_error`` on the
existing Subscription (1.10); and if a Subscriber raises from a signal method, considers the
Subscription cancelled and reports the error to :func:`rstreams.plugins.on_error` (2.13).
"""

from __future__ import annotations

import asyncio
import itertools
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from .._internal import plugins
from .._internal.atomics import AtomicInt
from .._internal.requests import MAX_DEMAND, add_request, produced, validate_request
from .._spec import Subscriber, Subscription, null_element_message
from ..errors import NoneElementError, ProtocolViolationError

__all__ = [
    "SyncRangePublisher",
    "ThreadPoolIterablePublisher",
    "AsyncioIterablePublisher",
    "SyncSubscriber",
    "AsyncSubscriber",
    "IdentityProcessor",
    "DaemonExecutor",
]

T = TypeVar("T")


class SubmitExecutor(Protocol):
    """Anything with ``submit(fn)``: a :class:`concurrent.futures.Executor` or a :class:`DaemonExecutor`."""

    def submit(self, fn: Callable[[], Any], /) -> Any: ...


class DaemonExecutor:
    """A tiny thread pool of *daemon* threads: it never keeps the interpreter alive at exit.

    (``concurrent.futures.ThreadPoolExecutor`` joins its workers at exit, which would hang on a
    never-ending stream.)

    Example::

        pool = DaemonExecutor(workers=2)
        pool.submit(lambda: print(threading.current_thread().name))      # rstreams-tck-0
        ThreadPoolIterablePublisher(range(3), pool).subscribe(SyncSubscriber(on_item=print))
    """

    def __init__(self, workers: int = 4, name: str = "rstreams-tck") -> None:
        self._tasks: queue.SimpleQueue[Callable[[], Any]] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True) for i in range(workers)
        ]
        for t in self._threads:
            t.start()

    def _work(self) -> None:
        while True:
            task = self._tasks.get()
            try:
                task()
            except BaseException as exc:  # noqa: BLE001 - a task must never kill the worker
                plugins.on_error(exc, "an rstreams.tck DaemonExecutor task raised")

    def submit(self, fn: Callable[[], Any], /) -> None:
        self._tasks.put(fn)


_shared_executor: DaemonExecutor | None = None
_shared_lock = threading.Lock()


def shared_executor() -> DaemonExecutor:
    """The process-wide executor of the reference implementations (4 daemon threads)."""
    global _shared_executor
    with _shared_lock:
        if _shared_executor is None:
            _shared_executor = DaemonExecutor(4, "rstreams-tck-pool")
        return _shared_executor


def _report(exc: BaseException, where: str) -> None:
    # rule 2.13: the Subscription is considered cancelled and the error goes to the global hook.
    plugins.on_error(exc, f"rule 2.13: Subscriber.{where} raised; the Subscription was cancelled")


class _Registry:
    """The Subscribers currently subscribed to one Publisher (rule 1.10: same Subscriber twice)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: dict[int, _DrainSubscription[Any]] = {}

    def add(self, sub: _DrainSubscription[Any], subscriber: object) -> _DrainSubscription[Any] | None:
        with self._lock:
            existing = self._active.get(id(subscriber))
            if existing is not None and existing.subscriber is subscriber:
                return existing
            self._active[id(subscriber)] = sub
            return None

    def remove(self, sub: _DrainSubscription[Any], key: int) -> None:
        with self._lock:
            if self._active.get(key) is sub:
                del self._active[key]


class _DrainSubscription(Generic[T]):
    """A Subscription over an iterator, drained by a work-in-progress counter (queue-drain).

    Exactly one thread runs :meth:`_drain_loop` at a time; ``request``/``cancel`` from any thread
    (also from within ``on_next``) only record their intent and bump ``_wip``. Subclasses decide
    where the loop runs (the calling thread, a pool, an event loop).
    """

    BATCH = 1 << 62

    def __init__(self, registry: _Registry, subscriber: Subscriber[T], source: Callable[[], Iterator[T]]) -> None:
        self.subscriber: Subscriber[T] | None = subscriber
        self._key = id(subscriber)
        self._registry: _Registry | None = registry
        self._source: Callable[[], Iterator[T]] | None = source
        self._it: Iterator[T] | None = None
        self._requested = AtomicInt()
        self._wip = AtomicInt()
        self._cancelled = False
        self._error: BaseException | None = None
        self._subscribed = False

    # -- Subscription -------------------------------------------------------------------------------
    def request(self, n: int) -> None:
        err = validate_request(n)
        if err is not None:
            if self._error is None:
                self._error = err  # rule 3.9, signalled by the drain loop
        else:
            add_request(self._requested, n)  # capped and sticky at 2**63 - 1 (rule 3.17)
        self._schedule()

    def cancel(self) -> None:
        self._cancelled = True  # rule 3.12
        # rule 3.13: drop the Subscriber at once, not when a (possibly queued) drain task runs; a
        # running drain keeps only its local reference until its next cancelled check
        self.subscriber = None
        self._schedule()

    def reject(self, error: BaseException) -> None:
        if self._error is None:
            self._error = error
        self._schedule()

    # -- the drain ----------------------------------------------------------------------------------
    def _schedule(self) -> None:
        if self._wip.get_and_increment() == 0:  # race: the 0 -> 1 mover owns the loop
            self._run()

    def _run(self) -> None:
        self._drain_loop()

    def _release(self) -> None:
        self._cancelled = True
        self.subscriber = None
        self._it = None
        self._source = None
        registry, self._registry = self._registry, None
        if registry is not None:
            registry.remove(self, self._key)

    def _drain_loop(self, missed: int = 1) -> None:
        while True:
            s = self.subscriber
            if self._cancelled or s is None:
                self._release()
                return
            if not self._subscribed:
                self._subscribed = True
                try:
                    s.on_subscribe(self)
                except Exception as exc:  # noqa: BLE001 - rule 2.13
                    self._release()
                    _report(exc, "on_subscribe")
                    return
                if self._cancelled:
                    self._release()
                    return
            err = self._error
            if err is not None:
                self._release()
                try:
                    s.on_error(err)
                except Exception as exc:  # noqa: BLE001 - rule 2.13
                    _report(exc, "on_error")
                return
            if self._it is None:
                source = self._source
                assert source is not None
                try:
                    self._it = source()
                except Exception as exc:  # noqa: BLE001 - rule 1.4: a failing source signals on_error
                    self._error = exc
                    continue
            it = self._it
            r = self._requested.get()
            e = 0
            limit = min(r, self.BATCH)
            done = False
            while e < limit:
                if self._cancelled:
                    break
                try:
                    item = next(it)
                except StopIteration:
                    done = True
                    break
                except Exception as exc:  # noqa: BLE001 - rule 1.4
                    self._error = exc
                    break
                try:
                    s.on_next(item)
                except Exception as exc:  # noqa: BLE001 - rule 2.13
                    self._release()
                    _report(exc, "on_next")
                    return
                e += 1
            if not done and not self._cancelled and self._error is None and e == 0:
                # No demand: an exhausted iterator still completes eagerly (allowed since RS 1.0.3).
                done = self._peek_exhausted()
            if done and not self._cancelled:
                self._release()
                try:
                    s.on_complete()
                except Exception as exc:  # noqa: BLE001 - rule 2.13
                    _report(exc, "on_complete")
                return
            if e:
                produced(self._requested, e)
                if e == limit:
                    # More demand may remain: go round again (or hand the loop over, for fairness).
                    if e == self.BATCH and self._continue_later(missed):
                        return
                    continue
            if self._error is not None or self._cancelled:
                continue
            missed = self._wip.add_and_get(-missed)
            if missed == 0:
                return

    def _peek_exhausted(self) -> bool:
        return False

    def _continue_later(self, missed: int) -> bool:
        """Hook: hand the drain loop over after a batch (fairness) and return True; default: False."""
        return False


class _RangeIterator(Iterator[int]):
    """``range`` iteration that can tell it is exhausted without consuming (eager completion)."""

    def __init__(self, start: int, stop: int) -> None:
        self.i = start
        self.stop = stop

    def __iter__(self) -> _RangeIterator:
        return self

    def __next__(self) -> int:
        i = self.i
        if i >= self.stop:
            raise StopIteration
        self.i = i + 1
        return i


class _SyncRangeSubscription(_DrainSubscription[int]):
    def _peek_exhausted(self) -> bool:
        it = self._it
        return isinstance(it, _RangeIterator) and it.i >= it.stop


class SyncRangePublisher:
    """Emits ``start, start + 1, ..., start + count - 1`` synchronously, on the requesting thread.

    ``count = 2**63 - 1`` is effectively infinite. Each ``subscribe`` starts a new range (cold).

    Example::

        from rstreams.tck import SyncRangePublisher, PublisherVerification

        class TestSyncRange(PublisherVerification):
            def create_publisher(self, n): return SyncRangePublisher(0, n)
            def create_failed_publisher(self): return None
    """

    def __init__(self, start: int, count: int) -> None:
        if count < 0:
            raise ValueError(f"count must be >= 0, got {count}")
        self.start = start
        self.count = count
        self._registry = _Registry()

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        if subscriber is None:
            raise NoneElementError(null_element_message("subscribe", "1.9"))
        start, stop = self.start, self.start + self.count
        sub = _SyncRangeSubscription(self._registry, subscriber, lambda: _RangeIterator(start, stop))
        existing = self._registry.add(sub, subscriber)
        if existing is not None:
            existing.reject(ProtocolViolationError("1.10", "this Subscriber is already subscribed to this Publisher"))
            return
        sub._schedule()  # on_subscribe, then eager completion of an empty range

    def __repr__(self) -> str:
        return f"SyncRangePublisher({self.start}, {self.count})"


class _PoolSubscription(_DrainSubscription[T]):
    BATCH = 512

    def __init__(
        self,
        registry: _Registry,
        subscriber: Subscriber[T],
        source: Callable[[], Iterator[T]],
        executor: SubmitExecutor,
    ) -> None:
        super().__init__(registry, subscriber, source)
        self._executor = executor

    def _continue_later(self, missed: int) -> bool:
        self._executor.submit(lambda: self._drain_loop(missed))
        return True

    def _run(self) -> None:
        try:
            self._executor.submit(self._drain_loop)
        except RuntimeError as exc:  # an executor that was shut down: fail the Subscription
            s = self.subscriber
            self._release()
            if s is not None:
                plugins.on_error(exc, "rstreams.tck: the publisher's executor refused the drain task")


class ThreadPoolIterablePublisher(Generic[T]):
    """Emits the elements of ``iterable`` (iterated anew for each Subscriber) from a thread pool.

    Each Subscription drains on ``executor`` (default: a shared pool of 4 daemon threads), one task
    at a time, so its signals are serial (1.3) but arrive on pool threads, never on the caller's.

    Example::

        pub = ThreadPoolIterablePublisher(range(10))
    """

    def __init__(self, iterable: Iterable[T], executor: SubmitExecutor | None = None) -> None:
        self._iterable = iterable
        self._executor = executor
        self._registry = _Registry()

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        if subscriber is None:
            raise NoneElementError(null_element_message("subscribe", "1.9"))
        iterable = self._iterable
        sub = _PoolSubscription(
            self._registry, subscriber, lambda: iter(iterable), self._executor or shared_executor()
        )
        existing = self._registry.add(sub, subscriber)
        if existing is not None:
            existing.reject(ProtocolViolationError("1.10", "this Subscriber is already subscribed to this Publisher"))
            return
        sub._schedule()


class _LoopThread:
    """An asyncio event loop running forever in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name="rstreams-tck-asyncio", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()


_loop_thread: _LoopThread | None = None


def shared_loop() -> asyncio.AbstractEventLoop:
    """The process-wide event loop (in a daemon thread) used by :class:`AsyncioIterablePublisher`."""
    global _loop_thread
    with _shared_lock:
        if _loop_thread is None:
            _loop_thread = _LoopThread()
        return _loop_thread.loop


class _LoopSubscription(_DrainSubscription[T]):
    BATCH = 256

    def __init__(
        self,
        registry: _Registry,
        subscriber: Subscriber[T],
        source: Callable[[], Iterator[T]],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        super().__init__(registry, subscriber, source)
        self._loop = loop

    def _continue_later(self, missed: int) -> bool:
        self._loop.call_soon(self._drain_loop, missed)  # let other callbacks of the loop run
        return True

    def _run(self) -> None:
        try:
            self._loop.call_soon_threadsafe(self._drain_loop)
        except RuntimeError as exc:  # closed loop
            self._release()
            plugins.on_error(exc, "rstreams.tck: the publisher's event loop is closed")


class AsyncioIterablePublisher(Generic[T]):
    """Emits the elements of ``iterable`` from an asyncio event loop (callbacks on the loop thread).

    ``loop`` defaults to a shared loop running in a background daemon thread. Requests from any
    thread are handed to the loop with ``call_soon_threadsafe`` (one callback per burst).

    Example::

        pub = AsyncioIterablePublisher(range(10))
    """

    def __init__(self, iterable: Iterable[T], loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._iterable = iterable
        self._loop = loop
        self._registry = _Registry()

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        if subscriber is None:
            raise NoneElementError(null_element_message("subscribe", "1.9"))
        iterable = self._iterable
        sub = _LoopSubscription(self._registry, subscriber, lambda: iter(iterable), self._loop or shared_loop())
        existing = self._registry.add(sub, subscriber)
        if existing is not None:
            existing.reject(ProtocolViolationError("1.10", "this Subscriber is already subscribed to this Publisher"))
            return
        sub._schedule()


# ---------------------------------------------------------------------------------------------------
# Subscribers


class SyncSubscriber(Generic[T]):
    """Processes each element synchronously in ``on_next`` and requests one element at a time.

    Override :meth:`when_next` (return ``False`` to stop: the Subscription is cancelled),
    :meth:`when_complete` and :meth:`when_error`, or pass ``on_item``.

    Example::

        seen = []
        SyncRangePublisher(0, 3).subscribe(SyncSubscriber(on_item=seen.append))
        assert seen == [0, 1, 2]
    """

    def __init__(self, on_item: Callable[[T], object] | None = None) -> None:
        self._on_item = on_item
        self._subscription: Subscription | None = None
        self._done = False

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise NoneElementError(null_element_message("on_subscribe"))
        if self._subscription is not None or self._done:
            subscription.cancel()  # rule 2.5
            return
        self._subscription = subscription
        subscription.request(1)  # rule 2.1, at the very end of the signal (3.2 allows it)

    def on_next(self, item: T) -> None:
        if item is None:
            raise NoneElementError(null_element_message("on_next"))
        s = self._subscription
        if self._done or s is None:
            return  # rule 2.8: elements may still arrive after cancel
        try:
            keep = self.when_next(item)
        except Exception as exc:  # noqa: BLE001 - our own processing failed: cancel and report
            self._done = True
            self._subscription = None
            s.cancel()
            plugins.on_error(exc, "SyncSubscriber.when_next raised")
            return
        if keep:
            s.request(1)
        else:
            self._done = True
            self._subscription = None
            s.cancel()  # rule 2.6

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise NoneElementError(null_element_message("on_error"))
        self._done = True  # rule 2.4; no call on the Subscription here (2.3)
        self._subscription = None
        self.when_error(error)

    def on_complete(self) -> None:
        self._done = True
        self._subscription = None
        self.when_complete()

    # -- hooks ----------------------------------------------------------------------------------------
    def when_next(self, item: T) -> bool:
        if self._on_item is not None:
            self._on_item(item)
        return True

    def when_complete(self) -> None:
        pass

    def when_error(self, error: BaseException) -> None:
        pass

    # -- puppet support (whitebox tests) --------------------------------------------------------------
    def trigger_request(self, n: int) -> None:
        s = self._subscription
        if s is not None:
            s.request(n)

    def signal_cancel(self) -> None:
        s, self._subscription = self._subscription, None
        self._done = True
        if s is not None:
            s.cancel()


class AsyncSubscriber(Generic[T]):
    """Hands every signal to a worker (one task at a time on a pool) and requests one at a time.

    All calls to the Subscription come from the worker, serially (rule 2.7), including those made for
    :meth:`trigger_request`/:meth:`signal_cancel`; signal methods only enqueue and return (2.2).

    Example::

        sub = AsyncSubscriber(on_item=print)
        ThreadPoolIterablePublisher(range(3)).subscribe(sub)
    """

    def __init__(self, on_item: Callable[[T], object] | None = None, executor: SubmitExecutor | None = None) -> None:
        self._on_item = on_item
        self._executor = executor or shared_executor()
        self._queue: deque[tuple[str, Any]] = deque()
        self._wip = AtomicInt()
        self._subscription: Subscription | None = None
        self._done = False
        self._subscribed_once = False
        self._lock = threading.Lock()

    def _enqueue(self, kind: str, value: Any) -> None:
        self._queue.append((kind, value))  # deque.append is atomic
        if self._wip.get_and_increment() == 0:
            self._executor.submit(self._drain)

    def _drain(self) -> None:
        missed = 1
        while True:
            while self._queue:
                kind, value = self._queue.popleft()
                self._handle(kind, value)
            missed = self._wip.add_and_get(-missed)
            if missed == 0:
                return

    def _handle(self, kind: str, value: Any) -> None:
        if kind == "subscribe":
            if self._subscription is not None or self._done:
                value.cancel()  # rule 2.5
                return
            self._subscription = value
            value.request(1)
        elif kind == "next":
            s = self._subscription
            if self._done or s is None:
                return  # rule 2.8
            try:
                keep = self.when_next(value)
            except Exception as exc:  # noqa: BLE001
                keep = False
                plugins.on_error(exc, "AsyncSubscriber.when_next raised")
            if keep:
                s.request(1)
            else:
                self._done = True
                self._subscription = None
                s.cancel()
        elif kind == "complete":
            if not self._done:
                self._done = True
                self._subscription = None
                self.when_complete()
        elif kind == "error":
            if not self._done:
                self._done = True
                self._subscription = None
                self.when_error(value)
        elif kind == "request":
            s = self._subscription
            if s is not None and not self._done:
                s.request(value)
        elif kind == "cancel":
            s, self._subscription = self._subscription, None
            self._done = True
            if s is not None:
                s.cancel()

    # -- Subscriber ----------------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise NoneElementError(null_element_message("on_subscribe"))
        self._enqueue("subscribe", subscription)

    def on_next(self, item: T) -> None:
        if item is None:
            raise NoneElementError(null_element_message("on_next"))
        self._enqueue("next", item)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise NoneElementError(null_element_message("on_error"))
        self._enqueue("error", error)

    def on_complete(self) -> None:
        self._enqueue("complete", None)

    # -- hooks ----------------------------------------------------------------------------------------
    def when_next(self, item: T) -> bool:
        if self._on_item is not None:
            self._on_item(item)
        return True

    def when_complete(self) -> None:
        pass

    def when_error(self, error: BaseException) -> None:
        pass

    # -- puppet support ------------------------------------------------------------------------------
    def trigger_request(self, n: int) -> None:
        self._enqueue("request", n)

    def signal_cancel(self) -> None:
        self._enqueue("cancel", None)


# ---------------------------------------------------------------------------------------------------
# Processor


class _ProcessorSubscription:
    __slots__ = ("parent", "subscriber", "requested", "cancelled", "key", "error")

    def __init__(self, parent: IdentityProcessor[Any], subscriber: Subscriber[Any]) -> None:
        self.parent: IdentityProcessor[Any] | None = parent
        self.subscriber: Subscriber[Any] | None = subscriber
        self.requested = 0
        self.cancelled = False
        self.key = next(_keys)
        self.error: BaseException | None = None  # to signal from the drain (3.9 bad request, 1.10)

    def request(self, n: int) -> None:
        parent = self.parent
        if parent is not None:
            parent._request(self, n)

    def cancel(self) -> None:
        parent = self.parent
        if parent is not None:
            parent._cancel(self)


_keys = itertools.count()


class IdentityProcessor(Generic[T]):
    """A lock-step multicast identity Processor with a bounded buffer.

    It requests ``buffer_size`` elements upstream, holds at most that many, and emits an element
    when *every* current Subscriber has demand (coordinated emission); it replenishes upstream as it
    emits. Errors pass on immediately (rule 4.2); the upstream is cancelled when the last Subscriber
    cancels. Late Subscribers of a terminated Processor get the terminal signal.

    Example::

        proc = IdentityProcessor(16)
        SyncRangePublisher(0, 3).subscribe(proc)
        proc.subscribe(SyncSubscriber(on_item=print))
    """

    def __init__(self, buffer_size: int = 16) -> None:
        if buffer_size < 1:
            raise ValueError("buffer_size must be >= 1")
        self._buffer_size = buffer_size
        self._lock = threading.Lock()
        self._queue: deque[T] = deque()
        self._subs: list[_ProcessorSubscription] = []
        self._pending: list[_ProcessorSubscription] = []  # subscribed, on_subscribe not yet signalled
        self._upstream: Subscription | None = None
        self._upstream_cancelled = False
        self._upstream_to_cancel: Subscription | None = None
        self._done = False
        self._error: BaseException | None = None
        self._wip = AtomicInt()
        self._to_request = 0

    # -- Subscriber side ----------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise NoneElementError(null_element_message("on_subscribe"))
        with self._lock:
            if self._upstream is not None or self._done or self._upstream_cancelled:
                duplicate = True
            else:
                duplicate = False
                self._upstream = subscription
        if duplicate:
            subscription.cancel()  # rule 2.5
            return
        subscription.request(self._buffer_size)

    def on_next(self, item: T) -> None:
        if item is None:
            raise NoneElementError(null_element_message("on_next"))
        with self._lock:
            if self._done or self._upstream_cancelled:
                return  # rule 2.8
            self._queue.append(item)
        self._drain()

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise NoneElementError(null_element_message("on_error"))
        with self._lock:
            if self._done:
                return
            self._done = True
            self._error = error
            self._queue.clear()  # rule 4.2: errors pass on immediately, buffered elements are dropped
            self._upstream = None
        self._drain()

    def on_complete(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            self._upstream = None
        self._drain()

    # -- Publisher side -----------------------------------------------------------------------------
    def subscribe(self, subscriber: Subscriber[T]) -> None:
        if subscriber is None:
            raise NoneElementError(null_element_message("subscribe", "1.9"))
        ps = _ProcessorSubscription(self, subscriber)
        with self._lock:
            existing = next((p for p in self._subs + self._pending if p.subscriber is subscriber), None)
            if existing is not None:
                # rule 1.10: reject through the existing Subscription (serial with its signals)
                if existing.error is None:
                    existing.error = ProtocolViolationError(
                        "1.10", "this Subscriber is already subscribed to this Processor"
                    )
            else:
                self._pending.append(ps)
        self._drain()

    def _request(self, p: _ProcessorSubscription, n: int) -> None:
        err = validate_request(n)
        with self._lock:
            if p.cancelled:
                return
            if err is not None:
                if p.error is None:
                    p.error = err  # rule 3.9, signalled by the drain
            else:
                p.requested = min(MAX_DEMAND, p.requested + n)  # rule 3.17
        self._drain()

    def _cancel(self, p: _ProcessorSubscription) -> None:
        cancel_upstream: Subscription | None = None
        with self._lock:
            if p.cancelled:
                return
            p.cancelled = True
            if p in self._subs:
                self._subs.remove(p)
            if p in self._pending:
                self._pending.remove(p)
            p.subscriber = None  # rule 3.13
            p.parent = None
            if not self._subs and not self._pending and not self._done and self._upstream is not None:
                cancel_upstream, self._upstream = self._upstream, None
                self._upstream_cancelled = True
                self._queue.clear()
        if cancel_upstream is not None:
            # the last Subscriber left: stop the upstream, from the drain so that every call on the
            # upstream Subscription stays serial (rule 2.7)
            with self._lock:
                self._upstream_to_cancel = cancel_upstream
        self._drain()

    # -- the drain (one thread at a time; signals never under the lock) -----------------------------
    def _drain(self) -> None:
        if self._wip.get_and_increment() != 0:
            return
        missed = 1
        while True:
            self._drain_once()
            missed = self._wip.add_and_get(-missed)
            if missed == 0:
                return

    def _drain_once(self) -> None:
        while True:
            with self._lock:
                to_cancel, self._upstream_to_cancel = self._upstream_to_cancel, None
            if to_cancel is not None:
                to_cancel.cancel()
            with self._lock:
                pending, self._pending = self._pending, []
                self._subs.extend(pending)
            for p in pending:
                s = p.subscriber
                if s is None:
                    continue
                try:
                    s.on_subscribe(p)
                except Exception as exc:  # noqa: BLE001 - rule 2.13
                    self._drop(p)
                    _report(exc, "on_subscribe")
            # per-subscriber errors (3.9 bad request, 1.10 duplicate)
            for p in list(self._subs):
                err = p.error
                if err is not None and not p.cancelled:
                    s = p.subscriber
                    self._drop(p)
                    if s is not None:
                        try:
                            s.on_error(err)
                        except Exception as exc:  # noqa: BLE001
                            _report(exc, "on_error")
            with self._lock:
                if self._pending:
                    continue
                subs = [p for p in self._subs if not p.cancelled]
                item_ready = bool(self._queue) and bool(subs) and all(p.requested > 0 for p in subs)
                item: Any = None
                if item_ready:
                    item = self._queue.popleft()
                    for p in subs:
                        if p.requested < MAX_DEMAND:
                            p.requested -= 1
                    self._to_request += 1
                terminal = self._done and not self._queue
                error = self._error
            if item_ready:
                for p in subs:
                    s = p.subscriber
                    if s is None or p.cancelled:
                        continue
                    try:
                        s.on_next(item)
                    except Exception as exc:  # noqa: BLE001 - rule 2.13
                        self._cancel(p)
                        _report(exc, "on_next")
                self._replenish()
                continue
            if terminal:
                for p in subs:
                    s = p.subscriber
                    self._drop(p)
                    if s is None:
                        continue
                    try:
                        if error is not None:
                            s.on_error(error)
                        else:
                            s.on_complete()
                    except Exception as exc:  # noqa: BLE001 - rule 2.13
                        _report(exc, "on_error" if error is not None else "on_complete")
            return

    def _replenish(self) -> None:
        limit = max(1, self._buffer_size // 2)
        with self._lock:
            if self._to_request < limit or self._upstream is None:
                return
            n, self._to_request = self._to_request, 0
            up = self._upstream
        up.request(n)

    def _drop(self, p: _ProcessorSubscription) -> None:
        with self._lock:
            p.cancelled = True
            if p in self._subs:
                self._subs.remove(p)
            p.subscriber = None
            p.parent = None
