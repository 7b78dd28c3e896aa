"""Every publisher the library ships, through the TCK's Publisher verification (one class each,
generated from ``library_publishers.ENTRIES``); the processors through the Identity Processor or the
Publisher verification, as their docstrings say."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from library_publishers import ENTRIES, Entry

from rstreams.processors import (
    AsyncProcessor,
    BehaviorProcessor,
    MulticastProcessor,
    PublishProcessor,
    ReplayProcessor,
    UnicastProcessor,
)
from rstreams.tck import IdentityProcessorVerification, PublisherVerification

pytestmark = pytest.mark.tck


class _Timeouts:
    default_timeout_ms = 2000
    # the wait for spurious signals after a test's last step: these publishers signal on the calling
    # thread (the asynchronous ones wait 40 ms below), so a late signal could only come from a
    # stray thread, which shows within a few ms; ~7,000 tests wait it
    no_signals_timeout_ms = 2
    poll_timeout_ms = 2
    publisher_reference_gc_timeout_ms = 20
    # an OPTIONAL rule a publisher does not implement (1.10 rejection, 1.11 multicast...) is an xfail
    # after this wait; every publisher here that implements one signals within a few ms
    optional_timeout_ms = 200
    # the OPTIONAL rule 1.10 test (reject the same Subscriber subscribing twice) waits this long instead:
    # where implemented (UnicastProcessor) the on_error is signalled from inside the second subscribe(),
    # on the test's thread; the Flowables do not reject (rule 1.10 makes it the caller's bug), and each
    # of them (~160) would otherwise wait optional_timeout_ms for its xfail
    optional_rule_timeouts_ms = {"1.10": 20}


class _AsyncTimeouts(_Timeouts):
    no_signals_timeout_ms = 40
    publisher_reference_gc_timeout_ms = 100
    optional_timeout_ms = 500


def _make_class(name: str, entry: Entry) -> type:
    base = _AsyncTimeouts if entry.asynchronous else _Timeouts

    def create_publisher(self: Any, n: int) -> Any:
        return entry.make(n)

    def create_failed_publisher(self: Any) -> Any:
        return entry.failed() if entry.failed is not None else None

    def max_elements_from_publisher(self: Any) -> int:
        return entry.max_elements

    return type(
        f"TestTck_{name}",
        (base, PublisherVerification),
        {
            "create_publisher": create_publisher,
            "create_failed_publisher": create_failed_publisher,
            "max_elements_from_publisher": max_elements_from_publisher,
            "stochastic_iterations": 10,
            "__module__": __name__,
        },
    )


for _name, _entry in ENTRIES.items():
    globals()[f"TestTck_{_name}"] = _make_class(_name, _entry)


# ---------------------------------------------------------------------------------------- processors
class TestTckUnicastProcessor(_AsyncTimeouts, IdentityProcessorVerification):
    stochastic_iterations = 10

    def create_identity_processor(self, buffer_size: int) -> Any:
        return UnicastProcessor.create()

    def create_failed_publisher(self) -> Any:
        p: UnicastProcessor[Any] = UnicastProcessor.create()
        p.on_error(RuntimeError("failed"))
        return p

    def create_element(self, i: int) -> Any:
        return i

    def max_supported_subscribers(self) -> int:
        return 1


class TestTckSerializedProcessor(_AsyncTimeouts, IdentityProcessorVerification):
    """``to_serialized()`` of a processor that passes the full verification."""

    stochastic_iterations = 10

    def create_identity_processor(self, buffer_size: int) -> Any:
        return UnicastProcessor.create().to_serialized()

    def create_failed_publisher(self) -> Any:
        return None

    def create_element(self, i: int) -> Any:
        return i

    def max_supported_subscribers(self) -> int:
        return 1


class TestTckMulticastProcessor(_AsyncTimeouts, IdentityProcessorVerification):
    stochastic_iterations = 10

    def create_identity_processor(self, buffer_size: int) -> Any:
        return MulticastProcessor.create(buffer_size, ref_count=True)

    def create_failed_publisher(self) -> Any:
        return None

    def create_element(self, i: int) -> Any:
        return i

    def does_coordinated_emission(self) -> bool:
        return True


def _prefilled(proc: Any, n: int) -> Any:
    for i in range(n):
        proc.on_next(i)
    proc.on_complete()
    return proc


def _offering(proc: Any, n: int) -> Any:
    """Feed a non-coordinating processor from a thread that offers only when every subscriber has
    demand (as RxJava's AsPublisher TCK tests do)."""

    def feed() -> None:
        import time

        while not proc.has_subscribers:
            time.sleep(0.0005)
        i = 0
        deadline = time.monotonic() + 30
        while i < n and time.monotonic() < deadline:
            if not proc.has_subscribers:
                return
            if proc.offer(i):
                i += 1
            else:
                time.sleep(0.0002)
        proc.on_complete()

    threading.Thread(target=feed, daemon=True, name="tck-offer").start()
    return proc


class TestTckReplayProcessorAsPublisher(_Timeouts, PublisherVerification):
    stochastic_iterations = 10

    def create_publisher(self, n: int) -> Any:
        return _prefilled(ReplayProcessor.create(), n)

    def create_failed_publisher(self) -> Any:
        p: ReplayProcessor[Any] = ReplayProcessor.create()
        p.on_error(RuntimeError("failed"))
        return p

    def max_elements_from_publisher(self) -> int:
        return 1000


class TestTckAsyncProcessorAsPublisher(_Timeouts, PublisherVerification):
    def create_publisher(self, n: int) -> Any:
        return _prefilled(AsyncProcessor.create(), 1) if n else _prefilled(AsyncProcessor.create(), 0)

    def create_failed_publisher(self) -> Any:
        p: AsyncProcessor[Any] = AsyncProcessor.create()
        p.on_error(RuntimeError("failed"))
        return p

    def max_elements_from_publisher(self) -> int:
        return 1


class TestTckPublishProcessorAsPublisher(_AsyncTimeouts, PublisherVerification):
    stochastic_iterations = 5

    def create_publisher(self, n: int) -> Any:
        return _offering(PublishProcessor.create(), n)

    def create_failed_publisher(self) -> Any:
        return None

    def max_elements_from_publisher(self) -> int:
        return 1000


class TestTckBehaviorProcessorAsPublisher(_AsyncTimeouts, PublisherVerification):
    stochastic_iterations = 5

    def create_publisher(self, n: int) -> Any:
        return _offering(BehaviorProcessor.create(), n)

    def create_failed_publisher(self) -> Any:
        return None

    def max_elements_from_publisher(self) -> int:
        return 1000
