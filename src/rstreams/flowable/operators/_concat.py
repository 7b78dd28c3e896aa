"""concat, concat_with, start_with and switch_if_empty: one source after another.

All four subscribe their sources one at a time through a :class:`SubscriptionArbiter`, so demand
the current source did not fulfil carries over to the next one: before switching, the subscriber
reports what it emitted (``produced(n)``) and the arbiter asks the next source only for what is
still outstanding.

Subscribing the next source is **trampolined** (race / recursion: a synchronous source completes
from inside ``subscribe``, whose ``on_complete`` would subscribe the next source, and so on): the
``on_complete`` that finds the trampoline busy only increments its wip counter, and the loop that
owns the counter subscribes the next source when the current ``subscribe`` call returns. The stack
depth stays constant however many sources there are.

When every source is a synchronous fused source (``just``, ``range``, ``from_iterable`` and stateless
chains over them), ``concat`` folds at assembly time into one ``itertools.chain`` (runs of adjacent
fused sources fold even when others do not).

:class:`~rstreams._internal.subscribers.ArbiterSubscriber` is shared with the resubscribing operators
(``on_error_resume_next``, ``retry``, ``repeat``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any, TypeVar, final

from ..._internal.atomics import AtomicInt
from ..._internal.subscribers import ArbiterSubscriber
from ..._spec import Publisher, Subscriber
from ...errors import NoneElementError
from .._base import as_flowable, variadic_sources
from .._flowable import Flowable
from .._fused import Ahead, FusedFlowable, Fusion, Sizer

__all__ = [
    "concat",
    "concat_with",
    "start_with",
    "switch_if_empty",
    "ChainedLook",
]

T = TypeVar("T")


# ---------------------------------------------------------------------------------------------
# concat


@final
class _ConcatSubscriber(ArbiterSubscriber):
    __slots__ = ("_sources", "_index", "_trampoline")

    def __init__(self, downstream: Subscriber[Any], sources: tuple[Flowable[Any], ...]) -> None:
        super().__init__(downstream)
        self._sources = sources
        self._index = 0
        self._trampoline = AtomicInt(0)  # race/recursion: on_complete inside subscribe (trampoline)

    def on_complete(self) -> None:
        self.subscribe_next()

    def subscribe_next(self) -> None:
        t = self._trampoline
        if t.get_and_increment() != 0:
            return  # the loop below (further up this stack, or on another thread) goes on
        sources = self._sources
        n = len(sources)
        while True:
            if self.is_cancelled:
                self._sources = ()
                return
            i = self._index
            if i == n:
                self._sources = ()
                self.complete_downstream()
                return
            self._index = i + 1
            self.account()
            sources[i].subscribe(self)
            if t.decrement_and_get() == 0:
                return


@final
class _ConcatFlowable(Flowable[T]):
    __slots__ = ("sources",)

    def __init__(self, sources: tuple[Flowable[Any], ...]) -> None:
        self.sources = sources

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        s = _ConcatSubscriber(subscriber, self.sources)
        subscriber.on_subscribe(s)
        s.subscribe_next()

    def __repr__(self) -> str:
        return f"Flowable.concat(<{len(self.sources)} sources>)"


class ChainedLook:
    """The node of a concatenation of fused chains with user stages (``_fused.py``). Asked whether
    more may come, it asks the part being iterated, then the parts after it, opening them as the
    unfused concat subscribes the next source when the current one completes; the iterator
    (builtin ``chain`` over the parts: no cost per element) takes the parts it opened in order.
    Nothing happens before on_subscribe: the unfused concat subscribes its first source after it."""

    __slots__ = ("_parts", "_ahead", "_node")

    def __init__(self, parts: Iterable[Fusion[Any]]) -> None:
        self._parts = iter(parts)
        self._ahead: deque[tuple[Iterator[Any], Ahead]] = deque()  # opened to answer, not yet iterated
        self._node: Ahead | None = None  # the part being iterated

    @staticmethod
    def open(parts: Iterable[Fusion[Any]]) -> tuple[Iterator[Any], Ahead]:
        look = ChainedLook(parts)
        return chain.from_iterable(look._iterators()), look

    def _open(self) -> tuple[Iterator[Any], Ahead] | None:
        part = next(self._parts, None)
        if part is None:
            return None
        it, node, _ = part.open(need_node=True)
        assert node is not None
        return it, node

    def _iterators(self) -> Iterator[Iterator[Any]]:
        while True:
            got = self._ahead.popleft() if self._ahead else self._open()
            if got is None:
                return
            it, self._node = got
            yield it

    def done(self, early: bool) -> bool:
        if early:
            return False
        node = self._node
        if node is not None and not node.done(False):
            return False
        for _, node in self._ahead:
            if not node.done(False):
                return False
        while True:
            got = self._open()
            if got is None:
                return True
            self._ahead.append(got)
            if not got[1].done(False):
                return False


def _chain_fusions(fusions: list[Fusion[Any]]) -> Fusion[Any]:
    factories = [f.factory for f in fusions]
    sizers = [f.sizer for f in fusions]

    def make() -> Iterator[Any]:
        # lazily: source k's iterator is created only when source k-1 is exhausted (as subscribing)
        return chain.from_iterable(fac() for fac in factories)

    sizer: Sizer | None = None
    if all(s is not None for s in sizers):
        known: list[Sizer] = [s for s in sizers if s is not None]

        def total() -> int | None:
            acc = 0
            for s in known:
                v = s()
                if v is None:
                    return None
                acc += v
            return acc

        sizer = total
    producers: tuple[str, ...] = ()
    for f in fusions:
        producers += f.producers
    # parts whose top may not be pulled ahead make a root that asks its parts (ChainedLook)
    parts = tuple(fusions)
    return Fusion(
        make,
        sizer,
        producers,
        ("concat",),
        user=any(f.user for f in parts),
        pure=all(f.pure for f in parts),
        look=lambda: ChainedLook.open(parts),
    )


def _build_concat(sources: list[Flowable[Any]]) -> Flowable[Any]:
    # flatten nested concats (a.concat_with(b).concat_with(c)... stays one flat trampoline)
    flat: list[Flowable[Any]] = []
    for s in sources:
        if type(s) is _ConcatFlowable:
            flat.extend(s.sources)
        else:
            flat.append(s)
    # fold runs of adjacent fused sources into one itertools.chain
    out: list[Flowable[Any]] = []
    run: list[Fusion[Any]] = []
    run_src: list[Flowable[Any]] = []

    def flush() -> None:
        if len(run) == 1:
            out.append(run_src[0])
        elif run:
            out.append(FusedFlowable(_chain_fusions(list(run))))
        run.clear()
        run_src.clear()

    for s in flat:
        fz = s._fused()
        if fz is not None:
            run.append(fz)
            run_src.append(s)
        else:
            flush()
            out.append(s)
    flush()
    if not out:
        from ..sources._basic import empty

        return empty()
    if len(out) == 1:
        return out[0]
    return _ConcatFlowable(tuple(out))


def concat(*sources: Publisher[T]) -> Flowable[T]:
    sources = variadic_sources(sources)
    return _build_concat([as_flowable("concat", s) for s in sources])


def concat_with(source: Flowable[T], other: Publisher[T]) -> Flowable[T]:
    return _build_concat([source, as_flowable("concat_with", other)])


def start_with(source: Flowable[T], *items: Any) -> Flowable[T]:
    if len(items) == 1 and callable(getattr(items[0], "subscribe", None)):
        return _build_concat([as_flowable("start_with", items[0]), source])
    if not items:
        return source
    for x in items:
        if x is None:
            raise NoneElementError("start_with(): an item is None; None is not a valid element (rule 2.13)")
    from ..sources._basic import just

    return _build_concat([just(*items), source])


# ---------------------------------------------------------------------------------------------
# switch_if_empty


@final
class _SwitchIfEmptySubscriber(ArbiterSubscriber):
    __slots__ = ("_other",)

    def __init__(self, downstream: Subscriber[Any], other: Flowable[Any]) -> None:
        super().__init__(downstream)
        self._other: Flowable[Any] | None = other

    def on_complete(self) -> None:
        other = self._other
        # _emitted is only reset when switching, so 0 here means "the main source was empty"
        if other is not None and self._emitted == 0:
            self._other = None
            if not self.is_cancelled:
                other.subscribe(self)
            return
        self.complete_downstream()


@final
class _SwitchIfEmptyFlowable(Flowable[T]):
    __slots__ = ("_source", "_other")

    def __init__(self, source: Flowable[T], other: Flowable[T]) -> None:
        self._source = source
        self._other = other

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        s = _SwitchIfEmptySubscriber(subscriber, self._other)
        subscriber.on_subscribe(s)
        if not s.is_cancelled:
            self._source.subscribe(s)


def switch_if_empty(source: Flowable[T], other: Publisher[T]) -> Flowable[T]:
    return _SwitchIfEmptyFlowable(source, as_flowable("switch_if_empty", other))
