"""rstreams.tck: the Reactive Streams technology compatibility kit for Python.

The kit checks that a Publisher, a Subscriber or a Processor obeys the Reactive Streams rules
(1.1-4.2, adapted to Python: ``None`` -> ``TypeError``, ``request(n <= 0)`` -> ``on_error(ValueError)``
naming rule 3.9, ``Long.MAX_VALUE`` -> ``2**63 - 1``). It has the 94 tests of the JVM TCK, under the
same names in snake_case (``test_required_spec309_request_zero_must_signal_value_error``), plus
Python checks under ``py_`` names (``test_required_py_spec213_...``) that turn JVM "untested" items into
real tests and cover Python's own bad demand (``request(True)``, ``request(1.5)``, ``request(2**64)``).

Verify your Publisher in a pytest module::

    from rstreams.tck import PublisherVerification

    class TestMyRange(PublisherVerification):
        def create_publisher(self, n): return MyRange(0, n)
        def create_failed_publisher(self): return None

Outcomes: a broken REQUIRED rule fails with a message naming the rule; an OPTIONAL rule that is not
implemented is an ``xfail`` ("does NOT implement OPTIONAL rule 1.11: ..."), except that, as in the
JVM kit, ``optional_spec104`` fails when the given failed Publisher misbehaves; untested rules and
config-gated tests skip with the reason. Each test gets a fresh :class:`TestEnvironment`, so the kit
runs under pytest-xdist. Timeouts: ``RSTREAMS_TCK_TIMEOUT_MS`` (200), ``RSTREAMS_TCK_NO_SIGNALS_TIMEOUT_MS``
(100), ``RSTREAMS_TCK_POLL_TIMEOUT_MS`` (10), ``RSTREAMS_TCK_GC_TIMEOUT_MS`` (300); the JVM names
(``DEFAULT_TIMEOUT_MILLIS`` ...) work too. ``RSTREAMS_TCK_OPTIONAL_TIMEOUT_MS`` (or the class attribute
``optional_timeout_ms``) shortens the expected-signal wait of OPTIONAL tests only (default: the same);
the class attribute ``optional_rule_timeouts_ms`` (``{"1.10": 20}``) sets it per OPTIONAL rule.

Without pytest collection (pytest need not be installed): ``python -m rstreams.tck mymod:make_range --kind publisher`` or
:func:`run_verification`.

Execution model: the kit drives the implementation from the test's thread and waits (with timeouts)
for signals, which may arrive on any thread. An asyncio-based implementation must therefore run its
event loop in another thread (as :class:`AsyncioIterablePublisher` does with its background loop);
a loop running on the test's own thread would only produce timeouts. The detectors are thread based
(rule 1.3 overlapping signals, rule 3.3 per-thread recursion depth), which also covers signals
dispatched from one event loop thread.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._env import SubscriberPuppet, TestEnvironment, WhiteboxSubscriberProbe
    from ._outcomes import TckFailure
    from ._processor import IdentityProcessorVerification
    from ._publisher import PublisherVerification
    from ._reference import (
        AsyncioIterablePublisher,
        AsyncSubscriber,
        DaemonExecutor,
        IdentityProcessor,
        SyncRangePublisher,
        SyncSubscriber,
        ThreadPoolIterablePublisher,
    )
    from ._runner import TestResult, format_table, run_test, run_verification
    from ._subscriber import SubscriberBlackboxVerification, SubscriberWhiteboxVerification

# Public names are loaded on first use: the pytest plugin entry point imports this package for every
# pytest run in the environment, and unrelated test sessions should not pay for the kit.
_LAZY: dict[str, str] = {
    "SubscriberPuppet": "._env",
    "TestEnvironment": "._env",
    "WhiteboxSubscriberProbe": "._env",
    "TckFailure": "._outcomes",
    "IdentityProcessorVerification": "._processor",
    "PublisherVerification": "._publisher",
    "AsyncioIterablePublisher": "._reference",
    "AsyncSubscriber": "._reference",
    "DaemonExecutor": "._reference",
    "IdentityProcessor": "._reference",
    "SyncRangePublisher": "._reference",
    "SyncSubscriber": "._reference",
    "ThreadPoolIterablePublisher": "._reference",
    "TestResult": "._runner",
    "format_table": "._runner",
    "run_test": "._runner",
    "run_verification": "._runner",
    "SubscriberBlackboxVerification": "._subscriber",
    "SubscriberWhiteboxVerification": "._subscriber",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'rstreams.tck' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AsyncSubscriber",
    "AsyncioIterablePublisher",
    "DaemonExecutor",
    "IdentityProcessor",
    "IdentityProcessorVerification",
    "PublisherVerification",
    "SubscriberBlackboxVerification",
    "SubscriberPuppet",
    "SubscriberWhiteboxVerification",
    "SyncRangePublisher",
    "SyncSubscriber",
    "TckFailure",
    "TestEnvironment",
    "TestResult",
    "ThreadPoolIterablePublisher",
    "WhiteboxSubscriberProbe",
    "format_table",
    "run_test",
    "run_verification",
]
