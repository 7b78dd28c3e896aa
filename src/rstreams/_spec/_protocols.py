"""The four Reactive Streams interfaces as runtime-checkable generic Protocols.

Any object with the right methods is a Publisher/Subscriber/Subscription/Processor: no base class is
needed, and ``isinstance(x, Publisher)`` works (structurally, method names only).
"""

from __future__ import annotations

from typing import Protocol, TypeVar, runtime_checkable

__all__ = ["Publisher", "Subscriber", "Subscription", "Processor"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
T_contra = TypeVar("T_contra", contravariant=True)
R_co = TypeVar("R_co", covariant=True)


@runtime_checkable
class Subscription(Protocol):
    """The link between one Subscriber and one Publisher (rules 3.1-3.17).

    Example::

        sub.request(10)   # rule 3.8: ten more elements may be signalled
        sub.cancel()      # rule 3.12: the Publisher eventually stops signalling
    """

    def request(self, n: int) -> None: ...

    def cancel(self) -> None: ...


@runtime_checkable
class Subscriber(Protocol[T_contra]):
    """Receives the signals of one Subscription (rules 2.1-2.13).

    Example::

        class Printer:
            def on_subscribe(self, s): s.request(2**63 - 1)
            def on_next(self, item): print(item)
            def on_error(self, exc): print("failed", exc)
            def on_complete(self): print("done")
    """

    def on_subscribe(self, subscription: Subscription) -> None: ...

    def on_next(self, item: T_contra) -> None: ...

    def on_error(self, error: BaseException) -> None: ...

    def on_complete(self) -> None: ...


@runtime_checkable
class Publisher(Protocol[T_co]):
    """A provider of a potentially unbounded sequence of elements (rules 1.1-1.11).

    Example::

        from rstreams import Flowable
        Flowable.range(0, 3).subscribe(on_next=print)
    """

    def subscribe(self, subscriber: Subscriber[T_co]) -> None: ...


@runtime_checkable
class Processor(Subscriber[T_contra], Publisher[R_co], Protocol[T_contra, R_co]):
    """A processing stage: both a Subscriber and a Publisher (rules 4.1, 4.2).

    Example::

        p: Processor[int, int] = PublishProcessor.create()
        ts = p.test()
        Flowable.just(1, 2).subscribe(p)     # a Subscriber of one stream ...
        ts.assert_result(1, 2)               # ... and a Publisher to others
    """
