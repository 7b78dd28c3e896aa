"""Argument checks shared by the operators: one wording and one error type per mistake.

A wrong type (``prefetch="8"``, ``True``: a bool is an int subclass but never a count) is a
``TypeError``; a value out of range (``buffer(0)``) is a ``ValueError``. Both name the operator and
the argument, so the error reads ``buffer(): count must be > 0, got 0`` at assembly time, not as a
rule 3.9 error at subscription.

Example::

    positive_int("buffer", "count", 3)        # 3
    positive_int("buffer", "count", 0)        # ValueError: buffer(): count must be > 0, got 0
    non_negative_int("take", "count", -1)     # ValueError: take(): count must be >= 0, got -1
    check_callable("map", 3)                  # TypeError: map(): expected a callable, got int
"""

from __future__ import annotations

__all__ = ["positive_int", "non_negative_int", "check_callable"]


def _int(op: str, what: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{op}(): {what} must be an int, got {type(value).__name__} {value!r}")
    return value


def positive_int(op: str, what: str, value: object) -> int:
    """``value`` if it is an int > 0; else TypeError (not an int) or ValueError (<= 0)."""
    n = _int(op, what, value)
    if n <= 0:
        raise ValueError(f"{op}(): {what} must be > 0, got {n}")
    return n


def non_negative_int(op: str, what: str, value: object) -> int:
    """``value`` if it is an int >= 0; else TypeError (not an int) or ValueError (< 0)."""
    n = _int(op, what, value)
    if n < 0:
        raise ValueError(f"{op}(): {what} must be >= 0, got {n}")
    return n


def check_callable(op: str, fn: object) -> None:
    """Nothing if ``fn`` is callable; else a TypeError naming the operator (at assembly time)."""
    if not callable(fn):
        raise TypeError(f"{op}(): expected a callable, got {type(fn).__name__}")
