"""Builders for rule-violation messages. Every message names the rule it refers to."""

from __future__ import annotations

from typing import Final

from ._rules import RULES

__all__ = [
    "MAX_DEMAND",
    "violation",
    "bad_request_message",
    "null_element_message",
]

#: ``Long.MAX_VALUE`` on the JVM: demand at or above it is "effectively unbounded" (rule 3.17).
MAX_DEMAND: Final[int] = 2**63 - 1


def violation(rule: str, detail: str) -> str:
    """Build a message ``"Rule X.Y violated: detail (the whole rule text)"``.

    >>> violation("1.1", "3 items for a demand of 2").startswith("Rule 1.1 violated: 3 items")
    True
    """
    text = RULES.get(rule, "")
    return f"Rule {rule} violated: {detail} ({text})" if text else f"Rule {rule} violated: {detail}"


def bad_request_message(n: object) -> str:
    """The rule 3.9 message for a bad ``request(n)`` argument.

    >>> "3.9" in bad_request_message(0)
    True
    """
    if isinstance(n, int) and not isinstance(n, bool):
        return (
            f"Rule 3.9: non-positive subscription request: request({n}); "
            "demand must be a positive int (2**63 - 1 means unbounded)"
        )
    return (
        f"Rule 3.9: illegal subscription request: request({n!r}) of type {type(n).__name__}; "
        "demand must be a positive int (non-positive or non-int requests are illegal)"
    )


def null_element_message(where: str, rule: str = "2.13") -> str:
    """The message for a ``None`` where an element/argument is required.

    >>> null_element_message("on_next")
    'Rule 2.13: on_next(None): None is not a valid Reactive Streams element or argument'
    """
    return f"Rule {rule}: {where}(None): None is not a valid Reactive Streams element or argument"
