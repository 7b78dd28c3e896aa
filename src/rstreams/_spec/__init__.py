"""The Reactive Streams specification, adapted to Python (self-contained: imports nothing else of rstreams)."""

from ._messages import MAX_DEMAND, bad_request_message, null_element_message, violation
from ._protocols import Processor, Publisher, Subscriber, Subscription
from ._rules import RULES, rule_text

__all__ = [
    "MAX_DEMAND",
    "RULES",
    "Processor",
    "Publisher",
    "Subscriber",
    "Subscription",
    "bad_request_message",
    "null_element_message",
    "rule_text",
    "violation",
]
