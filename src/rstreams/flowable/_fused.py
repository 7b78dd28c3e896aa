"""Assembly-time fusion of synchronous, stateless chains (DESIGN.md section 4).

A synchronous source (``range``, ``just``, ``from_iterable``) followed by stateless stages (``map``,
``filter``, ``take``, ``skip``, ``take_while``, ``skip_while``, ``scan``, ``flat_map_iterable``,
``buffer(n)``, ``concat``/``start_with`` of synchronous sources, ...) is folded, when the chain is
assembled, into ONE description: a factory of builtin iterators (``map``, ``filter``, ``islice``,
``itertools.*``) plus, where it can be known, the number of elements. Subscribing drives that
iterator with ``itertools.islice`` per ``request(n)``, and with a plain ``for`` loop when demand is
unbounded: one Python call per element (the downstream's ``on_next``) instead of one per stage.

``hide()`` breaks fusion, as in RxJava. Fused and unfused chains give identical signals.

Looking ahead. To complete eagerly (RxJava's ``fromIterable`` calls ``hasNext()`` at subscription
and after each element) the driver pulls one element ahead when demand is met and the size is
unknown. Through stages that run user code (``Fusion.user``: a mapper, a predicate) that would
call the user's function for an element nobody requested, and could signal its error without
demand, which the unfused operators never do. So such chains look ahead only once the *source*
is exhausted: the source iterator is kept apart from the stages (``Fusion.open``) and probed with
``length_hint``, or through :class:`_Peek` (pulls the source alone one ahead) when it has none,
or :class:`_Counted` when the source itself runs user code but its size is known. A chain whose
end cannot be seen that way does not fold into ``concat``/``repeat`` (``chains_blind``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain, islice, repeat
from operator import is_ as _is
from operator import length_hint
from typing import Any, Final, Generic, TypeVar

from .._internal.atomics import AtomicFlag, AtomicInt
from .._internal.requests import MAX_DEMAND, add_request, produced, validate_request
from .._spec import Subscriber
from ._flowable import Flowable

__all__ = ["Fusion", "FusedFlowable", "IterSubscription", "batch_sink", "none_index", "sized"]

T = TypeVar("T")

Sizer = Callable[[], "int | None"]

_END: Final = object()
_NO_PULL: Final = object()  # the driver did not look ahead
_RANGE_ONLY: Final = ("range",)
_BATCH: Final = 4096  # the largest batch handed over at once (memory stays bounded)
# Under unbounded demand batches are smaller: a consumer that cancels mid-batch makes upstream
# user functions run at most this many elements ahead (rule 3.12: "eventually").
_UNBOUNDED_BATCH: Final = 256


def _take_batch(
    src: Iterator[Any], n: int, on_batch: Callable[[list[Any]], Any], fusion: Fusion[Any], sub: IterSubscription[Any]
) -> list[Any]:
    """Pull up to ``n`` elements and hand them over as one batch. If the chain fails (or yields
    None) part-way, the elements before it are handed over first, then the error is raised: the
    same signals as the one-by-one path. If the batch made the consumer cancel (``all``,
    ``contains`` deciding on an element before the failure), the failure is dropped: the
    one-by-one path never pulls the chain after a cancel, so it never sees that error."""
    chunk: list[Any] = []
    failure: Exception | None = None
    try:
        chunk.extend(islice(src, n))  # extend keeps what it consumed if the iterator raises
    except Exception as e:
        failure = e
    i = -1 if fusion.none_free else none_index(chunk)
    if i >= 0:
        chunk = chunk[:i]
        failure = fusion.none_error()
    if chunk:
        on_batch(chunk)
    if failure is not None:
        if chunk and sub._cancelled:
            return chunk
        raise failure
    return chunk


class _Peek:
    """A source iterator that can say whether it is exhausted by pulling one element ahead from
    the source only (what the unfused ``from_iterable`` does to complete eagerly), so the stages
    over it never run for an element nobody requested. Used only for sources without a
    ``length_hint`` under stages that run user code: it costs one Python call per element."""

    __slots__ = ("_it", "_head")

    def __init__(self, it: Iterator[Any]) -> None:
        self._it = it
        self._head: Any = _END

    def __iter__(self) -> _Peek:
        return self

    def __next__(self) -> Any:
        h = self._head
        if h is _END:
            return next(self._it)
        self._head = _END
        if type(h) is _Failed:
            raise h.error  # the source failed while pulled ahead: its turn has come
        return h

    def exhausted(self) -> bool:
        if self._head is not _END:
            return False
        try:
            h = next(self._it, _END)
        except Exception as e:
            # kept for the stages: elements they produce before pulling the source (scan's
            # seed) still go out first when they are requested (see Fusion.subscribe)
            self._head = _Failed(e)
            raise
        if h is _END:
            return True
        self._head = h
        return False


class _Failed:
    """A source error found by :class:`_Peek` while pulling ahead; raised at its turn."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


class _Counted:
    """A source iterator of known size (at most ``size`` elements) that says it is exhausted once
    that many went through, without pulling ahead (the source runs user code)."""

    __slots__ = ("_it", "_left")

    def __init__(self, it: Iterator[Any], size: int) -> None:
        self._it = it
        self._left = size

    def __iter__(self) -> _Counted:
        return self

    def __next__(self) -> Any:
        x = next(self._it)
        self._left -= 1
        return x

    def exhausted(self) -> bool:
        return self._left <= 0


def batch_sink(d: Any) -> Any:
    """The library-internal ``on_next_batch`` of ``d`` if it takes batches, else None.

    Batch consumers (aggregates, the lambda and strict subscribers, observe_on) always take them;
    map and filter take them only when their own downstream does (``accepts_batches``), so no
    user function runs ahead of a one-by-one operator such as take_while."""
    nb = getattr(d, "on_next_batch", None)
    if nb is None or not getattr(d, "accepts_batches", True):
        return None
    return nb
_MAX: Final = MAX_DEMAND


class Fusion(Generic[T]):
    """What a fused chain will do on subscription: an iterator factory and an optional size.

    ``producers`` names the stages that can produce an element from user code (``map``, ``scan``, ...),
    so that a ``None`` element can be blamed on the right operator.

    ``user``: some stage after the source runs user code per element (a mapper, a predicate). The
    driver then never pulls the chain ahead of demand while the source still has elements: that
    would call the user's function for an element nobody asked for (and could signal its error
    without demand), where the unfused operators only see elements as they are requested (RxJava:
    ``fromIterable(...).map(f)`` calls ``f`` once per requested element).
    """

    __slots__ = (
        "factory",
        "sizer",
        "producers",
        "names",
        "eager",
        "none_free",
        "user",
        "_source",
        "_source_user",
        "_source_sizer",
        "_stages",
        "bound_only",
        "_hold_at",
        "_nprobes",
        "_blind_upto",
    )

    def __init__(
        self,
        factory: Callable[[], Iterator[T]],
        sizer: Sizer | None,
        producers: tuple[str, ...] = (),
        names: tuple[str, ...] = (),
        eager: bool = True,
        none_free: bool = False,
        user: bool | None = None,
    ) -> None:
        self.factory = factory
        self.sizer = sizer
        self.producers = producers
        self.names = names
        # eager: discover the end by looking one element ahead once demand is met (as RxJava's
        # sources do). False for sources where pulling ahead is expensive (a Spark partition):
        # completion then comes with the next request.
        self.eager = eager
        # none_free: the chain cannot yield None (a range, through stages that only pass elements
        # on or group them), so batches skip the per-element None scan (rule 2.13 check)
        self.none_free = none_free
        # a root (a source, or a combination such as zip that prefetches its inputs anyway) may
        # be pulled ahead unless it says otherwise (concat/repeat of chains with user stages)
        self.user = bool(user)
        # the source's iterator factory and the stages over it, kept apart so that the driver can
        # ask the source itself whether it is exhausted (``open``)
        self._source: Callable[[], Iterator[Any]] = factory
        self._source_user = self.user  # the source itself runs user code (a concat of mapped chains)
        self._source_sizer = sizer
        # the stages over the source: (source iterator, probes or None) -> chain iterator; a
        # bounding stage (take) appends a probe of its own exhaustion when probes are wanted
        self._stages: Callable[[Iterator[Any], list[Any] | None], Iterator[T]] | None = None
        # A stage that can hold elements once the source is exhausted (flat_map_iterable's current
        # inner) or make one without it (scan's seed) defeats the probes below it: pulling the
        # chain when they say "exhausted" would run the user stages after it for an element nobody
        # requested. Such a stage brings its own probe (``then(probe=...)``); once a user stage
        # follows it, the probes before it (``_blind_upto``) are no longer asked. ``_nprobes``
        # counts the probes; ``_hold_at`` is the index of the last holding stage's probe (-1: none).
        # the size is only an upper bound (take(n) over a source of unknown size): reaching it
        # ends the stream, but fewer elements may come, so the end is looked for as if unknown
        self.bound_only = False
        self._hold_at = -1
        self._nprobes = 1
        self._blind_upto = 0

    def then(
        self,
        wrap: Callable[[Iterator[Any]], Iterator[Any]],
        name: str,
        sizer: Sizer | None = None,
        produces: bool = False,
        user: bool | None = None,
        bound: int | None = None,
        probe: Callable[[Iterator[Any], list[Any]], Any] | None = None,
    ) -> Fusion[Any]:
        """A new Fusion whose iterator is ``wrap(previous iterator)``.

        ``user``: whether the chain runs user code per element after this stage (default: it did
        before, or this stage produces elements from user code). A stage that runs a predicate
        passes True; a stage that consumes its upstream ahead anyway (as the unfused operator's
        prefetch does) passes False. ``bound``: the stage yields at most that many elements and
        then never pulls its upstream again (take): once it gave them, the driver may look ahead
        through later user stages (it completes right after the n-th, as the unfused take).
        ``probe``: the stage may yield elements after its upstream is exhausted (see
        ``_hold_at``), or knows its end better than the probes below (skip); ``probe(upstream iterator, the valid probes below)`` builds the stage as an iterator
        with an ``exhausted()`` method, used instead of ``wrap`` when the driver probes."""
        factory = self.factory

        def make() -> Iterator[Any]:
            return wrap(factory())

        f: Fusion[Any] = Fusion(
            make,
            sizer,
            self.producers + ((name,) if produces else ()),
            self.names + (name,),
            self.eager,
            self.none_free and not produces,
            (self.user or produces) if user is None else user,
        )
        f._source = self._source
        f._source_user = self._source_user
        f._source_sizer = self._source_sizer
        f.bound_only = self.bound_only or (bound is not None and self.sizer is None)
        f._hold_at = self._hold_at
        f._nprobes = self._nprobes
        f._blind_upto = self._blind_upto
        if self._hold_at >= 0 and (produces or user):
            f._blind_upto = self._hold_at  # user code after a holding stage: only its probe counts
        # the probes this stage's own probe may rely on: none below a holding stage's probe (the
        # source may be exhausted while that stage still holds elements)
        lo = f._blind_upto if self._hold_at < 0 else max(f._blind_upto, self._hold_at)
        if probe is not None:
            f._hold_at = f._nprobes
            f._nprobes += 1
        if bound is not None:
            f._nprobes += 1
        prev = self._stages

        def staged(it: Iterator[Any], probes: list[Any] | None) -> Iterator[Any]:
            up = it if prev is None else prev(it, probes)
            out: Iterator[Any]
            if probe is not None and probes is not None:
                out = probe(up, probes[lo:])  # one Python call per element, only when probed
                probes.append(out)
            else:
                out = wrap(up)
            if bound is not None and probes is not None:
                out = _Counted(out, bound)  # one Python call per element, only when probed
                probes.append(out)
            return out

        f._stages = staged
        return f

    def open(self) -> tuple[Iterator[T], Iterator[Any], list[Any] | None]:
        """The chain's iterator, its source's iterator and the probes of a chain with user stages
        (the driver asks them, without running any stage, whether the source or a bounding stage
        is exhausted: ``length_hint`` where the source knows it, else a :class:`_Peek` or
        :class:`_Counted` wrapper, used only when the stages run user code)."""
        src: Iterator[Any] = self._source()
        stages = self._stages
        if stages is None:
            return src, src, None
        probes: list[Any] | None = None
        if self.user and self.eager:  # eager=False never looks ahead
            if length_hint(src, -1) < 0:
                if not self._source_user:
                    src = _Peek(src)  # pulling the source ahead runs no user code
                elif self._source_sizer is not None:
                    n = self._source_sizer()  # a source with user code (a concat of mapped
                    if n is not None:  # chains): count what it gave instead of pulling it ahead
                        src = _Counted(src, n)
            probes = [src]
        return stages(src, probes), src, probes

    def none_error(self) -> TypeError:
        from ..errors import NoneElementError

        if self.producers:
            blame = " or ".join(f"{p}()" for p in dict.fromkeys(self.producers))
            return NoneElementError(
                f"{blame}: a user function returned None; None is not a valid element (rule 2.13). "
                "Filter it out or map it to a sentinel value."
            )
        return NoneElementError(
            f"{self.names[0] if self.names else 'source'}(): the source produced None; "
            "None is not a valid element (rule 2.13)"
        )

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        from .._internal.subscriptions import complete_empty, error_empty

        head: Any = _END
        failed: Exception | None = None
        src: Any = None
        try:
            it, src, probes = self.open()
            size = self.sizer() if self.sizer is not None else None
            if size != 0 and self.eager and may_look_ahead(self, None if src is it else src, size, probes):
                # an empty stream completes at subscription, as RxJava's fromIterable (hasNext()
                # before anything is requested); an element found waits for the first request
                head = next(it, _END)
                if head is _END:
                    size = 0
        except Exception as e:
            if type(src) is not _Peek or type(src._head) is not _Failed:
                error_empty(subscriber, e)
                return
            # The source failed when probed (a user chain looks ahead at its source only). The
            # unfused operators see that error at subscription too, but what the subscriber
            # requests inside on_subscribe goes out first (scan's seed before the error, as
            # RxJava's scanSeed); the rest is dropped (errors are not delayed).
            failed = e
        if size == 0:
            complete_empty(subscriber)
            return
        s = IterSubscription(subscriber, it, size, self, src)
        s._head = head
        s._probes = probes
        subscriber.on_subscribe(s)
        if failed is not None:
            # the rule 3.9 path parks an error for the emission loop's owner: no overlap with a
            # loop that a request from on_subscribe (maybe on another thread) still runs; a
            # stream that already ended (the loop met the kept error) ignores it
            s._fail_request(failed)


def may_look_ahead(
    fusion: Fusion[Any], src: Iterator[Any] | None, remaining: int | None, probes: list[Any] | None = None
) -> bool:
    """Whether pulling the chain one element ahead (to complete eagerly, as RxJava's sources call
    ``hasNext()`` at subscription and after each element) is what the unfused operators would do.

    * No per-element user code in the stages: yes when the size is unknown (only sources and
      pass-through stages are pulled), and under ``take(n)`` over a source of unknown size
      (``remaining`` is then only a bound).
    * User code in the stages (``fusion.user``): only once the source itself is exhausted, so no
      user function runs for an element nobody requested (and no error is signalled for it).

    ``src`` is the source's iterator under the stages (None for a chain without stages, whose
    known size is exact); ``probes`` (user chains) the source's and each bounding stage's probe.
    May raise the source's own error (a :class:`_Peek` pulling ahead)."""
    if not fusion.user:
        if remaining is None or fusion.bound_only:
            return True
        return src is not None and length_hint(src, -1) <= 0
    if not probes:
        return False
    return probes_say_end(probes[fusion._blind_upto :] if fusion._blind_upto else probes)


def probes_say_end(probes: list[Any]) -> bool:
    """Whether one of ``probes`` says the chain above it can give nothing more. The last ones
    first: a take bound (``_Counted``) answers without pulling anything, where the source's
    ``_Peek`` pulls, and could meet an error that the bounded chain never sees."""
    for p in reversed(probes):
        if type(p) is _Peek or type(p) is _Counted or hasattr(p, "exhausted"):
            if p.exhausted():
                return True
        elif length_hint(p, -1) == 0:
            return True
    return False


class IterSubscription(Generic[T]):
    """Emits a builtin iterator to one subscriber under demand (rules 1.1, 3.3, 3.9, 3.17).

    The caller of ``request`` that moves demand from 0 runs the emission loop; re-entrant
    ``request`` calls from ``on_next`` only add demand (rule 3.3: recursion depth 1). Demand is
    read once per batch; the unbounded fast path does no accounting at all.
    """

    __slots__ = (
        "_downstream",
        "_it",
        "_remaining",
        "_requested",
        "_cancelled",
        "_fusion",
        "_bad",
        "_bad_once",
        "_head",
        "_src",
        "_probes",
    )

    def __init__(
        self, downstream: Subscriber[T], it: Iterator[T], size: int | None, fusion: Fusion[T], src: Iterator[Any] | None = None
    ) -> None:
        self._downstream: Subscriber[T] | None = downstream
        self._it: Iterator[T] | None = it
        # the source's own iterator under the stages (exhaustion probe); None: no stages
        self._src = None if src is it else src
        self._probes: list[Any] | None = None  # user chains: what says the chain may be pulled ahead
        self._remaining = size
        self._requested = AtomicInt(0)
        self._cancelled = False
        self._fusion = fusion
        self._bad: BaseException | None = None  # a rule 3.9 error waiting for the loop owner
        self._bad_once = AtomicFlag()
        self._head: Any = _END

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self._fail_request(err)
                return
        if add_request(self._requested, n) == 0:  # race: request vs the emission loop
            self._emit()

    def _fail_request(self, err: BaseException) -> None:
        # rule 3.9, without overlapping a running emission loop (rule 1.3): the error is parked,
        # the loop is stopped, and whoever owns the loop signals it: the loop at its next check,
        # or this caller if no loop runs (it then becomes the owner through the demand counter).
        if self._cancelled:
            return
        self._bad = err
        self._cancelled = True
        if add_request(self._requested, 1) == 0:
            self._signal_bad()

    def _signal_bad(self) -> None:
        if not self._bad_once.try_set():  # race: the loop's exit vs the requester; one signals
            return
        err = self._bad
        d = self._downstream
        self._bad = None
        self._release()
        if err is not None and d is not None:
            d.on_error(err)

    def cancel(self) -> None:
        self._cancelled = True
        self._release()

    def _release(self) -> None:
        # rule 3.13: drop the subscriber and the iterator after cancellation/termination.
        self._downstream = None
        self._it = None
        self._src = None
        self._probes = None

    def _emit(self) -> None:
        try:
            self._run()
        finally:
            if self._bad is not None:
                self._signal_bad()  # the loop owner ends the stream with the parked 3.9 error

    def _run(self) -> None:
        d = self._downstream
        it = self._it
        if d is None or it is None:
            return
        on_next = d.on_next
        on_batch = batch_sink(d)  # library-internal batch protocol
        requested = self._requested
        remaining = self._remaining
        # an element pulled ahead to detect the end (eager completion) waits here; the iterator
        # itself is never re-wrapped, so pulling ahead costs nothing per element later
        head = self._head
        self._head = _END
        r = requested.get()
        e = 0
        while True:
            if r >= _MAX:
                # unbounded fast path: no accounting, only the cancelled check (rule 3.12)
                try:
                    src = it if head is _END else chain((head,), it)
                    if on_batch is not None:
                        # batch protocol under unbounded demand: C-speed slices, one call each;
                        # cancellation is checked per batch (rule 3.12: "eventually")
                        while not self._cancelled:
                            chunk = _take_batch(src, _UNBOUNDED_BATCH, on_batch, self._fusion, self)
                            if len(chunk) < _UNBOUNDED_BATCH:
                                break
                        if self._cancelled:
                            return
                    elif self._cancelled:
                        return
                    elif self._fusion.names == _RANGE_ONLY:
                        # the cancelled check follows on_next: a cancel from inside on_next stops
                        # the loop before the chain is pulled again (no user code runs after it)
                        for x in src:  # ints only: no None check needed
                            on_next(x)
                            if self._cancelled:
                                return
                    else:
                        for x in src:
                            if x is None:
                                raise self._fusion.none_error()
                            on_next(x)
                            if self._cancelled:
                                return
                except Exception as ex:
                    self._error(d, ex)
                    return
                self._complete(d)
                return
            want = r - e
            if remaining is not None and want > remaining:
                want = remaining
            count = 0
            try:
                if on_batch is not None and want > _BATCH:
                    want = _BATCH  # batches are bounded: huge demand is served batch by batch
                src = islice(it, want) if head is _END else chain((head,), islice(it, want - 1))
                head = _END
                if on_batch is not None:
                    # batch hand-off (to observe_on & co.): one C-speed slice, one call per batch
                    count = len(_take_batch(src, want, on_batch, self._fusion, self))
                elif not self._cancelled:
                    for x in src:
                        if x is None:
                            raise self._fusion.none_error()
                        on_next(x)
                        count += 1
                        if self._cancelled:
                            return  # checked after on_next: no pull after a cancel from inside it
            except Exception as ex:
                self._error(d, ex)
                return
            if self._cancelled:
                return
            e += count
            if remaining is not None:
                remaining -= count
                if remaining <= 0:
                    self._complete(d)
                    return
            if count < want:  # the iterator is exhausted
                self._complete(d)
                return
            r = requested.get()
            if r == e:
                if self._fusion.eager:
                    # eager completion (as RxJava's sources): look one element ahead
                    try:
                        nxt = next(it, _END) if self._may_look_ahead(remaining) else _NO_PULL
                    except Exception as ex:
                        self._error(d, ex)
                        return
                    if nxt is _END:
                        self._complete(d)
                        return
                    if nxt is not _NO_PULL:
                        head = nxt
                self._head = head
                self._remaining = remaining
                r = produced(requested, e)
                e = 0
                if r == 0:
                    return

    def _may_look_ahead(self, remaining: int | None) -> bool:
        return may_look_ahead(self._fusion, self._src, remaining, self._probes)

    def _complete(self, d: Subscriber[T]) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._release()
        d.on_complete()

    def _error(self, d: Subscriber[T], ex: BaseException) -> None:
        if self._cancelled:
            from .._internal import plugins

            plugins.on_error(ex, "error from a fused source after cancellation")
            return
        self._cancelled = True
        self._release()
        d.on_error(ex)



class FusedFlowable(Flowable[T]):
    """A Flowable whose whole chain so far is one :class:`Fusion`."""

    __slots__ = ("_fusion",)

    def __init__(self, fusion: Fusion[T]) -> None:
        self._fusion = fusion

    def _fused(self) -> Fusion[T]:
        return self._fusion

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._fusion.subscribe(subscriber)

    def __repr__(self) -> str:
        return f"Flowable<{' -> '.join(self._fusion.names)}>"


def none_index(chunk: list[Any]) -> int:
    """Index of the first ``None`` in ``chunk`` (by identity: elements' ``__eq__`` is never
    called, so numpy arrays and the like are fine), or -1. C-speed when there is none."""
    if not any(map(_is, chunk, repeat(None))):
        return -1
    for i, x in enumerate(chunk):
        if x is None:
            return i
    return -1  # pragma: no cover


def sized(n: int) -> Sizer:
    """A sizer for a known element count."""
    return lambda: n
