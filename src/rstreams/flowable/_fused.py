"""Assembly-time fusion of synchronous chains (DESIGN.md section 4): folding, then looking ahead.

Folding. A synchronous source (``range``, ``just``, ``from_iterable``) and the stages after it (``map``,
``filter``, ``take``, ``skip``, ``scan``, ``flat_map_iterable``, ``buffer(n)``, ``concat``, ``zip``, ...)
fold at assembly into one :class:`Fusion`: a root iterator, builtin-iterator stages (``map``,
``filter``, ``islice``, ``itertools.*``) and the exact element count where it is known. Subscribing
drives it with ``islice`` per ``request(n)`` (a plain ``for`` loop under unbounded demand): one
Python call per element, not one per stage. ``hide()`` breaks fusion, as in RxJava; fused and
unfused chains give identical signals.

Looking ahead. To complete eagerly (RxJava's sources call ``hasNext()`` at subscription and after
each element) the driver asks, once demand is met, whether more may come (:class:`Ahead`). As in
RxJava's fused ``isEmpty()``, a stage answers by asking the stage below; only stages with state
answer themselves: a root (source, ``take_last``'s tail, zip's rows) or a prefetching stage
(``ahead=True``: ``flat_map_iterable``) pulls one element ahead and keeps it for its turn
(:class:`_Peek`; ``length_hint`` where the root knows it); ``take`` (its n given), ``skip`` (its n
consumed first), ``scan``'s seed (not out yet) and ``concat`` (its current part, then the next)
answer from their state first. Stages that run user code per element or drop elements (map,
filter, distinct: ``ahead=False``) are never pulled ahead of demand, so a chain with one after its
last root or prefetching stage (``Fusion.user``) is looked ahead through these nodes; any other
chain has none and the driver pulls it one ahead itself, at no cost per element. An exact size ends
the stream without looking; a "nothing more" is confirmed by one pull of the chain (:func:`_confirm`).

When. Before ``on_subscribe`` only what a source does before its subscriber exists (``hasNext()``:
``done(early=True)``); what the unfused stages do after it (skip's request(n), take_last consuming,
a prefetch) happens right after ``on_subscribe`` (``IterSubscription._settle``), unless the
subscriber cancelled there or its request's loop looked first. An error met early waits for its
turn, so what the stages make first (scan's seed) still goes out if it is requested.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from itertools import chain, islice, repeat, takewhile
from operator import is_ as _is
from operator import is_not, length_hint
from typing import Any, Final, Generic, Protocol, TypeVar

from .._internal.atomics import AtomicFlag, AtomicInt
from .._internal.requests import MAX_DEMAND, add_request, produced, validate_request
from .._spec import Subscriber
from ._flowable import Flowable

__all__ = ["Ahead", "Fusion", "FusedFlowable", "IterSubscription", "batch_sink", "none_index", "sized"]

T = TypeVar("T")

Sizer = Callable[[], "int | None"]

_END: Final = object()
_UNSET: Final = object()  # IterSubscription._sink before the first loop looked it up
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


class Ahead(Protocol):
    """A stage's answer to "may more come?" (the module docstring has the model).

    ``done(early)`` is True when the stage can give nothing more. It runs no user code for an
    element nobody requested beyond what the unfused operators run by then: with ``early`` (before
    ``on_subscribe``) only a source's own look-ahead, after it also what the unfused stages do at
    subscription (skip consumes its n, a prefetching stage pulls). It may raise the chain's error."""

    def done(self, early: bool) -> bool: ...


class _Peek:
    """A stage that may be pulled ahead, as an iterator that holds the element it pulled to answer
    ``done`` until its turn (one Python call per element: used only under stages that ask it).

    ``pure``: pulling runs no user code, so it may happen before ``on_subscribe`` (a source's
    ``hasNext()``); otherwise (``take_last`` over a ``map``, ``flat_map_iterable``) only after, as
    the unfused operator consumes or prefetches then; before that it asks ``below``, the stage
    under it (None: a root), for the source's own early look."""

    __slots__ = ("_it", "_head", "_pure", "_below")

    def __init__(self, it: Iterator[Any], pure: bool, below: Ahead | None = None) -> None:
        self._it = it
        self._head: Any = _END
        self._pure = pure
        self._below = below

    def __iter__(self) -> _Peek:
        return self

    def __next__(self) -> Any:
        h = self._head
        if h is _END:
            return next(self._it)
        self._head = _END
        if type(h) is _Failed:
            raise h.error  # the chain failed while pulled ahead: its turn has come
        return h

    def done(self, early: bool) -> bool:
        h = self._head
        if h is _END:
            if early and not self._pure:
                b = self._below
                return b is not None and b.done(True)
            try:
                h = next(self._it, _END)
            except Exception as e:
                # kept for its turn: what the stages above make before pulling (scan's seed) goes
                # out first if it is requested in on_subscribe (RxJava's scanSeed does the same);
                # after on_subscribe it ends the stream at once (errors are not delayed)
                self._head = _Failed(e)
                if early:
                    return False
                raise
            if h is _END:
                return True
            self._head = h
            return False
        if type(h) is _Failed:
            if early:
                return False
            raise h.error
        return False


class _Failed:
    """An error met by :class:`_Peek` while pulling ahead; raised at its turn."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


class _Hint:
    """A root iterator that knows how many elements it has left (``length_hint``: lists, tuples,
    ranges): it answers without pulling, and adds nothing per element."""

    __slots__ = ("_it",)

    def __init__(self, it: Iterator[Any]) -> None:
        self._it = it

    def done(self, early: bool) -> bool:
        return length_hint(self._it, -1) == 0


def _pull_node(it: Iterator[Any], root: bool, pure: bool, below: Ahead | None) -> tuple[Iterator[Any], Ahead]:
    """The node of a chain that may be pulled ahead, and the iterator to drive in its place."""
    if root and length_hint(it, -1) >= 0:
        return it, _Hint(it)
    p = _Peek(it, pure, below)
    return p, p


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

# how a stage may be looked ahead through (``Fusion.then(ahead=...)``)
_PASS: Final = 0  # yields what it pulls, no user code: pulled ahead with the chain below it
_ASK: Final = 1  # runs user code per element or drops elements: asks the stage below
_AHEAD: Final = 2  # its unfused operator prefetches: may be pulled ahead (after on_subscribe)

Look = Callable[[Iterator[Any], Ahead], "tuple[Iterator[Any], Ahead]"]


class Fusion(Generic[T]):
    """What a fused chain will do on subscription: a root, stages over it, an optional size.

    ``producers`` names the stages that can produce an element from user code (``map``, ``scan``, ...),
    so that a ``None`` element can be blamed on the right operator.

    ``user``: the chain's top may not be pulled ahead of demand (a stage after the last root or
    prefetching stage runs user code per element, or drops elements): the driver asks the stages'
    nodes instead (module docstring). ``pure``: no stage runs user code at all when pulled.
    ``sizer``: the exact number of elements, when known without pulling anything (the driver then
    ends the stream at that count without looking).
    """

    __slots__ = (
        "factory",
        "sizer",
        "producers",
        "names",
        "eager",
        "none_free",
        "user",
        "pure",
        "_source",
        "_root_pure",
        "_root_look",
        "_stages",
        "_checks_top",
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
        pure: bool = True,
        look: Callable[[], Any] | None = None,
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
        # a root may be pulled ahead unless it says otherwise: a concatenation of chains with user
        # stages, which then brings ``look``: () -> (its iterator, its node)
        self.user = bool(user)
        self.pure = pure and not self.user
        self._root_pure = self.pure
        self._source: Callable[[], Iterator[Any]] = factory
        self._root_look = look if self.user else None
        # (wrap, how it is looked ahead through, its own node builder or None)
        self._stages: tuple[tuple[Callable[[Iterator[Any]], Iterator[Any]], int, Look | None], ...] = ()
        self._checks_top = False  # factory() raises at a None (none_checked): a producing stage's

    def then(
        self,
        wrap: Callable[[Iterator[Any]], Iterator[Any]],
        name: str,
        sizer: Sizer | None = None,
        produces: bool = False,
        ahead: bool | None = None,
        look: Look | None = None,
    ) -> Fusion[Any]:
        """A new Fusion whose iterator is ``wrap(previous iterator)``.

        ``ahead``: None (default) for a stage that yields what it pulls and runs no user code
        (take, skip, buffer), or that produces from user code (``produces``: as False); False for
        a stage that runs user code per element or drops elements (filter, distinct): never pulled
        ahead of demand, it asks the stage below; True for a stage whose unfused operator consumes
        its upstream ahead anyway (flat_map_iterable's prefetch): it may be pulled ahead.
        ``look(iterator below, node below) -> (iterator, node)``: the stage in the form the driver
        looks ahead through, for a stage that holds elements or ends on its own (its node answers
        from its state first); used only over stages that ask (module docstring)."""
        factory = self.factory
        checked = False
        raw_wrap = wrap
        if not self.none_free and name not in _FORWARDS:
            # rule 2.13, the same signals fused or not: the unfused operator below fails on a None
            # before this stage sees it, so this stage must never receive one (a filter would drop
            # it, a map would call the user's function with it, buffer would hide it in a list)
            wrap, look = _checked(self, wrap, look)
            checked = True

        # ``factory`` of a producing stage checks already (below): no second check over it
        inner = raw_wrap if self._checks_top else wrap
        if produces:
            # the consumers that pull chunks (aggregates, last, group_by) meet the None where it
            # is produced, not after a chunk: no user call for a later element (rule 2.13)

            def make() -> Iterator[Any]:
                return none_checked(inner(factory()), f)

        else:

            def make() -> Iterator[Any]:
                return inner(factory())

        kind = (_ASK if produces else _PASS) if ahead is None else (_AHEAD if ahead else _ASK)
        f: Fusion[Any] = Fusion(
            make,
            sizer,
            self.producers + ((name,) if produces else ()),
            self.names + (name,),
            self.eager,
            (self.none_free or checked) and not produces,
        )
        f.user = self.user if kind == _PASS else kind == _ASK
        f.pure = self.pure and kind == _PASS
        f._source = self._source
        f._root_pure = self._root_pure
        f._root_look = self._root_look
        f._stages = (*self._stages, (wrap, kind, look))
        f._checks_top = produces
        return f

    def open(self, need_node: bool = False) -> tuple[Iterator[T], Ahead | None, Iterator[Any]]:
        """The chain's iterator, its top node (None: the driver may pull the chain itself ahead;
        ``need_node``: a pull node over it then) and its root iterator. The nodes are built only
        for a chain whose top asks (``user``) and that looks ahead at all (``eager``)."""
        looks = self.user and self.eager
        node: Ahead | None = None
        pure = self._root_pure
        if self._root_look is not None and looks:
            it, node = self._root_look()
            src = it
        else:
            it = src = self._source()
            if looks:
                it, node = _pull_node(it, True, pure, None)  # a root may be pulled ahead
        for wrap, kind, look in self._stages:
            if node is None:
                it = wrap(it)
                continue
            if look is None:
                it = wrap(it)  # asks the stage below: the same node answers
            else:
                it, node = look(it, node)  # answers from its own state first
            pure = pure and kind == _PASS
            if kind == _AHEAD:
                it, node = _pull_node(it, False, pure, node)  # prefetching: may be pulled ahead
        if node is None and need_node:
            it, node = _pull_node(it, it is src, self.pure, None)
        return it, node, src

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

        head: Any = _NO_PULL
        try:
            it, node, src = self.open()
            size = self.sizer() if self.sizer is not None else None
            if size != 0 and self.eager:
                # an empty stream completes at subscription, as RxJava's fromIterable (hasNext()
                # before anything is requested); an element pulled ahead waits for the first request
                if node is not None:
                    head = _confirm(it) if node.done(True) else _NO_PULL
                elif self.pure:
                    head = _look(it, None if src is it else src, size)
                if head is _END:
                    size = 0
        except Exception as e:
            error_empty(subscriber, e)
            return
        if size == 0:
            complete_empty(subscriber)
            return
        s = IterSubscription(subscriber, it, size, self, src, node)
        if head is not _NO_PULL:
            s._head = head
        # the look-ahead of stages that the unfused operators make after on_subscribe
        late = self.eager and not self.pure
        s._look_due = late
        subscriber.on_subscribe(s)
        if late:
            s._settle()


def _confirm(it: Iterator[Any]) -> Any:
    """The chain's stages said they have nothing more: the iterator itself ends the stream. A
    pull that runs no user code for an element nobody requested, and meets StopIteration at once,
    except at builtin zip, which stops at its shortest input and, pulled again, pulls its first
    input once more: that input's own end or error, which the unfused zip (subscribing its inputs
    in order) meets first. An element it yields after all is kept for its turn."""
    return next(it, _END)


def _look(it: Iterator[Any], src: Iterator[Any] | None, remaining: int | None) -> Any:
    """Look one element ahead through a chain whose top may be pulled ahead: the element, ``_END``,
    or ``_NO_PULL`` where the exact size says more will come (the source's own ``length_hint``
    still says when it ran dry early: a list that shrank). May raise the chain's error."""
    if remaining is None or (src is not None and length_hint(src, -1) <= 0):
        return next(it, _END)
    return _NO_PULL


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
        "_node",
        "_look_due",
        "_sink",
    )

    def __init__(
        self,
        downstream: Subscriber[T],
        it: Iterator[T],
        size: int | None,
        fusion: Fusion[T],
        src: Iterator[Any] | None = None,
        node: Ahead | None = None,
    ) -> None:
        self._downstream: Subscriber[T] | None = downstream
        self._it: Iterator[T] | None = it
        # the root's own iterator under the stages (its length_hint); None: no stages
        self._src = None if src is it else src
        self._node = node  # the top stage's answer to "may more come?"; None: pull the chain ahead
        self._look_due = False  # the look-ahead due right after on_subscribe (see _settle)
        self._remaining = size
        self._requested = AtomicInt(0)
        self._cancelled = False
        self._fusion = fusion
        self._bad: BaseException | None = None  # a rule 3.9 error waiting for the loop owner
        self._bad_once = AtomicFlag()
        self._head: Any = _END
        # the downstream's batch hook (batch_sink), looked up by the first loop and kept for the
        # subscription (the downstream never changes; _release drops it with the downstream)
        self._sink: Any = _UNSET

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self._fail_request(err)
                return
        # add_request spelled out (one lock round trip, no call): race: request vs the emission
        # loop's produced; the caller that moves demand from 0 owns the loop (rule 3.3)
        requested = self._requested
        lock = requested._lock
        lock.acquire()
        old = requested._value
        if old < _MAX:
            new = old + n
            requested._value = _MAX if new >= _MAX else new
        lock.release()
        if old == 0:
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
        self._sink = _UNSET
        self._it = None
        self._src = None
        self._node = None

    def _emit(self) -> None:
        try:
            self._run()
        finally:
            if self._bad is not None:
                self._signal_bad()  # the loop owner ends the stream with the parked 3.9 error

    def _settle(self) -> None:
        """Right after on_subscribe: look ahead as the unfused stages do once their subscriber has
        its subscription (skip requests its n, take_last consumes, a prefetch starts), unless the
        subscriber cancelled in on_subscribe or a loop (its request) already looked."""
        if not self._look_due or self._cancelled:
            return
        # race: a request from another thread may start the loop now. Only the owner of the loop
        # touches the iterator: take ownership with one unit that is not demand, or leave the
        # look to the loop that owns it (it looks once its demand is met).
        requested = self._requested
        if not requested.compare_and_set(0, 1):
            return
        d = self._downstream
        it = self._it
        if self._look_due and not self._cancelled and d is not None and it is not None:
            self._look_due = False
            try:
                nxt = self._ahead(it, self._remaining)
            except Exception as ex:
                self._error(d, ex)
                return
            if nxt is _END:
                self._complete(d)
                return
            if nxt is not _NO_PULL:
                self._head = nxt
        if produced(requested, 1) != 0 or self._bad is not None:
            self._emit()  # demand (or a rule 3.9 error) arrived while this thread owned the loop

    def _ahead(self, it: Iterator[Any], remaining: int | None) -> Any:
        node = self._node
        if node is None:
            return _look(it, self._src, remaining)
        return _confirm(it) if node.done(False) else _NO_PULL

    def _run(self) -> None:
        d = self._downstream
        it = self._it
        if d is None or it is None or self._cancelled:
            return
        on_batch = self._sink
        if on_batch is _UNSET:
            on_batch = self._sink = batch_sink(d)  # library-internal batch protocol
        requested = self._requested
        if on_batch is not None and requested._value < _MAX and not self._batches(d, it, on_batch, requested):
            return  # the bounded batch loop ended the stream or met demand (else: it became unbounded)
        on_next = d.on_next
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
                # bounded demand into a batch consumer is _batches' loop: one element at a time here
                src = islice(it, want) if head is _END else chain((head,), islice(it, want - 1))
                head = _END
                if not self._cancelled:
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
                    # eager completion (as RxJava's sources): ask whether more may come
                    self._look_due = False
                    try:
                        nxt = self._ahead(it, remaining)
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

    def _batches(self, d: Subscriber[T], it: Iterator[T], on_batch: Callable[[list[Any]], Any], requested: AtomicInt) -> bool:
        """The loop under bounded demand into a batch consumer (observe_on, an aggregate, an
        iterator bridge, a strict subscriber): one list per turn, handed over in one call. Per
        request served in one batch: the request's lock round trip, this one's (produced), the
        list; the look-ahead only where the size does not answer it. True: demand became
        unbounded, the caller's loop goes on from the state saved here."""
        fusion = self._fusion
        remaining = self._remaining
        head = self._head
        self._head = _END
        r = requested._value
        e = 0
        while True:
            if r >= _MAX:
                self._head = head
                self._remaining = remaining
                return True
            want = r - e
            if remaining is not None and want > remaining:
                want = remaining
            if want > _BATCH:
                want = _BATCH  # batches are bounded: huge demand is served batch by batch
            if self._cancelled:
                return False  # a cancel (or a parked rule 3.9 error) from another thread: no more pulls
            try:
                if head is _END:
                    count = len(_take_batch(it, want, on_batch, fusion, self))
                else:
                    src = chain((head,), it)  # an element pulled ahead (eager completion) goes first
                    head = _END
                    count = len(_take_batch(src, want, on_batch, fusion, self))
            except Exception as ex:
                self._error(d, ex)
                return False
            if self._cancelled:
                return False
            e += count
            if remaining is not None:
                remaining -= count
                if remaining <= 0:
                    self._complete(d)
                    return False
            if count < want:  # the iterator is exhausted
                self._complete(d)
                return False
            r = requested._value  # a plain read (see atomics): more demand means another turn
            if r != e:
                continue
            if fusion.eager:
                # eager completion (as RxJava's sources): ask whether more may come, unless the
                # exact size says so already (a sized root with no stages: nothing to look at)
                self._look_due = False
                if remaining is None or self._node is not None or self._src is not None:
                    try:
                        nxt = self._ahead(it, remaining)
                    except Exception as ex:
                        self._error(d, ex)
                        return False
                    if nxt is _END:
                        self._complete(d)
                        return False
                    if nxt is not _NO_PULL:
                        head = nxt
            self._head = head
            self._remaining = remaining
            # produced(requested, e) spelled out (race: a request on another thread adds demand
            # now): whoever moves demand to 0 leaves the loop, the next request owns it again.
            # e <= r always (never more than requested is emitted): no floor needed.
            lock = requested._lock
            lock.acquire()
            r = requested._value
            if r < _MAX:
                r -= e
                requested._value = r
            lock.release()
            e = 0
            if r == 0:
                return False

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


# stages that hand every element on unchanged (a None reaches the driver's check, after the same
# elements as on the unfused path): no check below them
_FORWARDS: Final = frozenset({"take"})


def _checked(below: Fusion[Any], wrap: Callable[[Iterator[Any]], Iterator[Any]], look: Look | None) -> tuple[
    Callable[[Iterator[Any]], Iterator[Any]], Look | None
]:
    """``wrap`` and ``look`` over ``none_checked(iterator, below)``."""

    def checked_wrap(it: Iterator[Any]) -> Iterator[Any]:
        return wrap(none_checked(it, below))

    if look is None:
        return checked_wrap, None
    inner_look = look

    def checked_look(it: Iterator[Any], node: Ahead) -> tuple[Iterator[Any], Ahead]:
        return inner_look(none_checked(it, below), node)

    return checked_wrap, checked_look


_NOT_NONE: Final = partial(is_not, None)  # C-level "x is not None"


def none_checked(it: Iterator[Any], below: Fusion[Any]) -> Iterator[Any]:
    """``it``, raising ``below``'s None error where ``it`` yields a None (rule 2.13), at that
    element: nothing after it is pulled, so no user function runs for later elements, as on the
    unfused path where the producing operator fails at once.

    Builtins per element (``takewhile`` with a C predicate): the Python frames run once, at the
    end. ``takewhile`` stops at the first None, either a real one or the one ``_end`` yields
    after ``it`` is exhausted; ``_end`` having run tells them apart without pulling further.
    """
    ended = False

    def _end() -> Iterator[None]:
        nonlocal ended
        ended = True
        yield None

    def _tail() -> Iterator[Any]:
        if not ended:
            raise below.none_error()
        return
        yield  # a generator

    return chain(takewhile(_NOT_NONE, chain(it, _end())), _tail())


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
