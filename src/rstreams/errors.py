"""The exceptions rstreams raises or signals.

Mapping of the JVM exceptions (see ``DESIGN.md``): ``NullPointerException`` -> :class:`TypeError`
(:class:`NoneElementError`), ``IllegalArgumentException`` for ``request(n <= 0)`` -> :class:`ValueError`
(:class:`BadRequestError`), ``IllegalStateException`` -> :class:`ProtocolViolationError`,
``CompositeException`` -> :class:`ExceptionGroup`.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "RStreamsError",
    "ProtocolViolationError",
    "MissingBackpressureError",
    "UndeliverableError",
    "OnErrorNotImplementedError",
    "NoneElementError",
    "BadRequestError",
    "NoSuchElementError",
    "OneShotIteratorError",
    "LateElementError",
]


class RStreamsError(Exception):
    """Base class of every exception defined by rstreams."""


class ProtocolViolationError(RStreamsError, RuntimeError):
    """A Reactive Streams rule was broken (the JVM's IllegalStateException situations).

    ``rule`` names the broken rule, for example ``"2.12"``.

    >>> e = ProtocolViolationError("2.12", "on_subscribe called twice")
    >>> e.rule, str(e)
    ('2.12', 'Rule 2.12 violated: on_subscribe called twice')
    """

    def __init__(self, rule: str, detail: str) -> None:
        self.rule = rule
        self.detail = detail
        super().__init__(f"Rule {rule} violated: {detail}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.rule, self.detail), self.__dict__)


class MissingBackpressureError(RStreamsError, RuntimeError):
    """A producer had an item but the consumer had not requested it (rule 1.1 would be broken).

    The message says which operator overflowed and how to fix it (``on_backpressure_*``).
    """


class UndeliverableError(RStreamsError, RuntimeError):
    """Wraps an error that could not be delivered (after cancel or a terminal signal).

    It is passed to the hook in :mod:`rstreams.plugins`; ``__cause__`` is the original error.
    """

    def __init__(self, cause: BaseException, context: str = "") -> None:
        self.cause = cause
        self.context = context
        msg = f"undeliverable error: {type(cause).__name__}: {cause}"
        if context:
            msg += f" ({context})"
        super().__init__(msg)
        self.__cause__ = cause

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle/copy (process pools, Spark executors): rebuild from the cause, not the message
        return (type(self), (self.cause, self.context), self.__dict__)


class OnErrorNotImplementedError(RStreamsError, RuntimeError):
    """An error reached a lambda subscriber that was given no ``on_error`` callback."""

    def __init__(self, cause: BaseException) -> None:
        self.cause = cause
        super().__init__(
            f"the stream failed with {type(cause).__name__}: {cause}, and subscribe() was given no on_error "
            "callback; pass on_error=... to handle it"
        )
        self.__cause__ = cause

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.cause,), self.__dict__)


class NoneElementError(RStreamsError, TypeError):
    """``None`` was used as an element or signal argument (rules 2.13 / 1.9)."""


class BadRequestError(RStreamsError, ValueError):
    """``request(n)`` with ``n <= 0`` or a non-int ``n`` (rule 3.9)."""


class NoSuchElementError(RStreamsError, LookupError):
    """A single-valued operator (``first``, ``last``, ``element_at``, ...) found no element."""


class OneShotIteratorError(RStreamsError, RuntimeError):
    """A one-shot source was subscribed to a second time: ``Flowable.from_iterable(iterator)`` (a
    generator, a file, ``map(...)``) can only be iterated once, so a second subscriber, a ``retry`` or
    a ``repeat`` gets this error instead of the silently shortened rest of the iterator. Pass a
    factory (``Flowable.from_iterable(make_items)``) or use ``Flowable.defer`` to re-iterate."""


class LateElementError(RStreamsError, ValueError):
    """An element arrived after the watermark had passed the end of its window (an event-time
    window: ``tumbling_window``, ``sliding_window``, ``session_window``), and the operator was not
    told what to do with late elements (``late=`` a callable, a Processor, or ``"drop"``): nothing
    is dropped silently."""
