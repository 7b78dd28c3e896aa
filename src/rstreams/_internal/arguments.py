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
    check_callable_arg("generate", "dispose_fn", 3, none_ok=True)
                                              # TypeError: generate(): dispose_fn must be callable or None, got int
    check_bool("merge", "delay_error", 1)     # TypeError: merge(): delay_error must be a bool, got int
    positive_int_or_none("from_arrow", "batch_size", 0)
                                              # ValueError: from_arrow(): batch_size must be >= 1, got 0
"""

from __future__ import annotations

__all__ = [
    "positive_int",
    "non_negative_int",
    "positive_int_or_none",
    "check_callable",
    "check_callable_arg",
    "check_bool",
]


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


def positive_int_or_none(op: str, what: str, value: object) -> int | None:
    """``value`` if it is None or an int >= 1 (an optional size: a batch, a buffer's capacity);
    else TypeError (neither) or ValueError (< 1)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{op}(): {what} must be a positive int or None, got {value!r}")
    if value <= 0:
        raise ValueError(f"{op}(): {what} must be >= 1, got {value}")
    return value


def check_callable_arg(op: str, what: str, fn: object, *, none_ok: bool = False) -> None:
    """Nothing if ``fn`` is callable (or None with ``none_ok``); else a TypeError naming the
    operator and the argument: for operators that take more than one function."""
    if fn is None and none_ok:
        return
    if not callable(fn):
        allowed = "callable or None" if none_ok else "callable"
        raise TypeError(f"{op}(): {what} must be {allowed}, got {type(fn).__name__}")


def check_bool(op: str, what: str, value: object) -> bool:
    """``value`` if it is a bool (a flag such as ``delay_error``: ``1`` or ``"yes"`` is refused,
    so a misplaced positional argument is caught at assembly); else a TypeError."""
    if not isinstance(value, bool):
        raise TypeError(f"{op}(): {what} must be a bool, got {type(value).__name__}")
    return value
