"""Capped request accounting (seed 004, "BackpressureHelper").

Demand is a non-negative int capped at ``MAX_DEMAND = 2**63 - 1``, which is sticky: once demand
reaches it, it means "unbounded" and is never decremented. Accounting never wraps and never goes
negative.

Example::

    requested = AtomicInt()
    if add_request(requested, n) == 0:   # race: request vs drain; the 0 -> n mover drains
        drain()
    ...
    remaining = produced(requested, emitted)   # once per batch
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Final

from .._spec import MAX_DEMAND, bad_request_message
from ..errors import BadRequestError
from .atomics import AtomicInt

__all__ = [
    "MAX_DEMAND",
    "BAD_REQUEST_POISON",
    "DEFAULT_PREFETCH",
    "add_cap",
    "sub_cap",
    "mul_cap",
    "validate_request",
    "add_request",
    "request_or_error",
    "request_or_park",
    "produced",
]

#: How many elements an operator asks of each upstream (or inner source) ahead of its downstream's
#: demand when the caller gives no ``prefetch``; it refills when about three quarters are used
#: (RxJava's ``Flowable.bufferSize()``); also the default of every ``prefetch``, ``buffer_size`` and
#: ``max_concurrency`` in the facade's signatures.
DEFAULT_PREFETCH: Final = 128
#: What a deferred demand total holds after a bad amount was requested before the upstream existed
#: (rule 3.9): sticky in :func:`add_request`, forwarded as a (bad) request when the upstream arrives.
BAD_REQUEST_POISON: Final = -1


def add_cap(a: int, b: int) -> int:
    """``a + b`` capped at ``2**63 - 1``.

    >>> add_cap(2**62, 2**62) == 2**63 - 1
    True
    """
    r = a + b
    return MAX_DEMAND if r >= MAX_DEMAND else r


def mul_cap(a: int, b: int) -> int:
    """``a * b`` capped at ``2**63 - 1`` (for operators such as ``buffer(n)`` that scale demand)."""
    r = a * b
    return MAX_DEMAND if r >= MAX_DEMAND else r


def sub_cap(a: int, b: int) -> int:
    """``a - b`` floored at 0, keeping ``2**63 - 1`` sticky."""
    if a >= MAX_DEMAND:
        return MAX_DEMAND
    r = a - b
    return r if r > 0 else 0


def validate_request(n: object) -> BadRequestError | None:
    """Return ``None`` if ``n`` is a legal request amount, else the rule 3.9 error to signal.

    ``bool`` is refused (``request(True)`` is almost always a bug), as are floats, strings, ``None``
    and ``n <= 0``. Any positive int is legal; above ``2**63 - 1`` it means unbounded.

    >>> validate_request(5) is None, validate_request(2**70) is None
    (True, True)
    >>> type(validate_request(0)).__name__, type(validate_request(True)).__name__
    ('BadRequestError', 'BadRequestError')
    """
    if type(n) is int:
        if n > 0:
            return None
    elif isinstance(n, int) and not isinstance(n, bool) and n > 0:
        return None
    return BadRequestError(bad_request_message(n))


def add_request(requested: AtomicInt, n: int) -> int:
    """Add ``n`` to ``requested``, capped and sticky at ``2**63 - 1``; return the previous value.

    The caller that sees a previous value of 0 owns the emission loop (queue-drain). A negative
    total is the rule 3.9 poison of :func:`rstreams._internal.subscriptions.deferred_request` (a bad
    amount requested before the upstream existed): it is sticky too.
    """
    with requested._lock:  # one atomic read-modify-write (race: concurrent request calls)
        old = requested._value
        if old >= MAX_DEMAND or old < 0:
            return old
        new = old + n
        requested._value = MAX_DEMAND if new >= MAX_DEMAND else new
        return old


def request_or_error(requested: AtomicInt, n: int) -> BadRequestError | None:
    """The prologue and the accounting of a ``request(n)`` in one call: a legal ``n`` is added to
    ``requested`` as :func:`add_request` does (None is returned); an illegal one adds nothing and
    its rule 3.9 error is returned for the caller to signal its own way.

    Example::

        err = request_or_error(self._requested, n)
        if err is not None:
            self._bad = err   # delivered by the drain
        self._drain()
    """
    if type(n) is not int or n <= 0:  # a positive int skips the call
        err = validate_request(n)
        if err is not None:
            return err
    with requested._lock:  # add_request's body: one call per request, as before (race: concurrent requests)
        old = requested._value
        if old >= MAX_DEMAND or old < 0:
            return None
        new = old + n
        requested._value = MAX_DEMAND if new >= MAX_DEMAND else new
    return None


def request_or_park(requested: AtomicInt, n: int, park: Callable[[BadRequestError], object]) -> bool:
    """The ``request(n)`` of a source whose emission loop belongs to whoever moves ``requested``
    from 0: True if the caller now owns the loop and must run it. A legal ``n`` is added as
    :func:`add_request` does; an illegal one (rule 3.9) is handed to ``park`` (where the loop
    checks for it) and one unit of demand is added instead, which wakes the loop's owner to signal
    it: the error never overlaps a running loop (rule 1.3).

    Example::

        if request_or_park(self._requested, n, self._park_bad_request):
            self._loop()
    """
    if type(n) is not int or n <= 0:  # a positive int skips the call
        err = validate_request(n)
        if err is not None:
            park(err)
            n = 1
    with requested._lock:  # add_request's body: one call per request (race: concurrent requests)
        old = requested._value
        if old >= MAX_DEMAND or old < 0:
            return False
        new = old + n
        requested._value = MAX_DEMAND if new >= MAX_DEMAND else new
    return old == 0


def take_one(requested: AtomicInt) -> bool:
    """Consume one unit of outstanding demand (none to consume when unbounded); False when none
    was outstanding: the element arrived unrequested, the sender broke rule 1.1."""
    with requested._lock:  # race: take_one on the signalling thread vs request on another
        cur = requested._value
        if cur >= MAX_DEMAND:
            return True
        if cur <= 0:
            return False
        requested._value = cur - 1
        return True


def produced(requested: AtomicInt, n: int) -> int:
    """Subtract ``n`` emitted items from ``requested`` (unless unbounded); return the new value.

    Producing more than was requested is a rule 1.1 bug in the caller: the value is floored at 0
    rather than going negative.
    """
    with requested._lock:  # race: produced vs concurrent request
        cur = requested._value
        if cur >= MAX_DEMAND:
            return cur
        new = cur - n
        if new < 0:
            requested._value = 0
        else:
            requested._value = new
            return new
    from ..errors import ProtocolViolationError
    from . import plugins

    caller = sys._getframe(1).f_locals.get("self")  # the error path only: name the operator that saw it
    where = "" if caller is None else f" (seen by {type(caller).__name__}: its upstream ignored backpressure)"
    plugins.on_error(ProtocolViolationError("1.1", f"produced {n} items but only {cur} were requested{where}"))
    return 0
