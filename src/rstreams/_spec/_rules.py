"""The Reactive Streams rule table, rule ids 1.1 to 4.2, in our own short wording.

Rule numbers follow the Reactive Streams 1.0.3/1.0.4 specification for the JVM; the Python
adaptation (``None`` -> ``TypeError``, non-positive request -> ``ValueError``, ``Long.MAX_VALUE``
-> ``2**63 - 1``) is the one in ``DESIGN.md``.
"""

from __future__ import annotations

from typing import Final

__all__ = ["RULES", "rule_text"]

RULES: Final[dict[str, str]] = {
    # 1. Publisher
    "1.1": "A Publisher must signal no more on_next calls than the total number of elements requested through the Subscription.",
    "1.2": "A Publisher may signal fewer on_next calls than requested and end the Subscription with on_complete or on_error.",
    "1.3": "on_subscribe, on_next, on_error and on_complete to one Subscriber must be signalled serially: never concurrently, with a happens-before order between them.",
    "1.4": "A Publisher that fails must signal on_error.",
    "1.5": "A Publisher whose stream ends successfully (finite stream) must signal on_complete.",
    "1.6": "After a Publisher signals on_error or on_complete to a Subscriber, that Subscriber's Subscription must be considered cancelled.",
    "1.7": "After a terminal signal (on_error or on_complete) no further signals may reach the Subscriber.",
    "1.8": "After a Subscription is cancelled its Subscriber must eventually stop receiving signals.",
    "1.9": "Publisher.subscribe must call on_subscribe before any other signal, must return normally, and may refuse a Subscriber only by signalling on_error after on_subscribe; subscribe(None) must raise TypeError.",
    "1.10": "Publisher.subscribe may be called many times, but each time with a different Subscriber.",
    "1.11": "A Publisher may support several Subscribers and decides whether each Subscription is unicast or multicast.",
    # 2. Subscriber
    "2.1": "A Subscriber must signal demand through Subscription.request to receive on_next signals.",
    "2.2": "A Subscriber whose signal processing may hurt the Publisher's responsiveness should dispatch its signals asynchronously.",
    "2.3": "Subscriber.on_complete and Subscriber.on_error must not call any method on the Subscription or the Publisher.",
    "2.4": "Subscriber.on_complete and Subscriber.on_error must consider the Subscription cancelled once the signal is received.",
    "2.5": "A Subscriber that already has an active Subscription must cancel any further Subscription passed to on_subscribe.",
    "2.6": "A Subscriber must call Subscription.cancel when the Subscription is no longer needed.",
    "2.7": "A Subscriber must call request and cancel on its Subscription serially.",
    "2.8": "A Subscriber must be prepared to receive on_next signals after calling cancel while elements are still pending.",
    "2.9": "A Subscriber must be prepared to receive on_complete with or without a preceding request call.",
    "2.10": "A Subscriber must be prepared to receive on_error with or without a preceding request call.",
    "2.11": "A Subscriber must make sure its signal methods happen-before the processing of the respective signals (safe publication across threads).",
    "2.12": "Subscriber.on_subscribe must be called at most once for a given Subscriber (by object identity).",
    "2.13": "Subscriber signal methods must return normally, except that a None argument must raise TypeError; if a Subscriber raises, the Subscription is considered cancelled and the error is reported by the caller in a way fit for the runtime.",
    # 3. Subscription
    "3.1": "Subscription.request and Subscription.cancel may only be called inside the context of its Subscriber.",
    "3.2": "A Subscription must allow the Subscriber to call request synchronously from within on_next or on_subscribe.",
    "3.3": "Subscription.request must put an upper bound on the possible synchronous recursion between Publisher and Subscriber.",
    "3.4": "Subscription.request should respect the responsiveness of its caller by returning in a timely manner.",
    "3.5": "Subscription.cancel must respect the responsiveness of its caller, return in a timely manner, and be idempotent and thread-safe.",
    "3.6": "After a Subscription is cancelled, further calls to request must be no-ops.",
    "3.7": "After a Subscription is cancelled, further calls to cancel must be no-ops.",
    "3.8": "While a Subscription is not cancelled, request(n) must register n more elements to be produced to the Subscriber.",
    "3.9": "While a Subscription is not cancelled, request(n) with n <= 0 must signal on_error with a ValueError (IllegalArgumentException on the JVM) whose message explains that non-positive subscription requests are illegal.",
    "3.10": "While a Subscription is not cancelled, request may synchronously call on_next on this (or other) Subscribers.",
    "3.11": "While a Subscription is not cancelled, request may synchronously call on_complete or on_error on this (or other) Subscribers.",
    "3.12": "While a Subscription is not cancelled, cancel must request the Publisher to eventually stop signalling its Subscriber.",
    "3.13": "While a Subscription is not cancelled, cancel must request the Publisher to eventually drop every reference to the corresponding Subscriber.",
    "3.14": "While a Subscription is not cancelled, cancel may cause a stateful Publisher to shut down if no other Subscription exists.",
    "3.15": "Subscription.cancel must return normally.",
    "3.16": "Subscription.request must return normally.",
    "3.17": "A Subscription must support an unbounded number of request calls and a demand of up to 2**63 - 1; demand equal to or above 2**63 - 1 may be treated as effectively unbounded.",
    # 4. Processor
    "4.1": "A Processor is both a Subscriber and a Publisher and must obey the contracts of both.",
    "4.2": "A Processor may recover from an on_error signal; if it does, it must consider the Subscription cancelled, otherwise it must pass the error on to its Subscribers immediately.",
}


def rule_text(rule: str) -> str:
    """Return the text of ``rule`` (for example ``"3.9"``).

    >>> rule_text("1.1").startswith("A Publisher must signal no more")
    True
    """
    try:
        return RULES[rule]
    except KeyError:
        raise KeyError(f"unknown Reactive Streams rule {rule!r}; rules run from 1.1 to 4.2") from None
