"""Positive runs: the kit's own reference implementations pass their verifications."""

from __future__ import annotations

from typing import Any

from rstreams.tck import (
    AsyncioIterablePublisher,
    AsyncSubscriber,
    IdentityProcessor,
    IdentityProcessorVerification,
    PublisherVerification,
    SubscriberBlackboxVerification,
    SubscriberWhiteboxVerification,
    SyncRangePublisher,
    SyncSubscriber,
    ThreadPoolIterablePublisher,
    WhiteboxSubscriberProbe,
)


# Short timeouts keep the suite fast; the reference implementations answer in microseconds.
# The expected-signal timeout is generous (it only costs time when a test fails); the no-signal wait is
# short (it is paid by every passing test).
class _Fast:
    default_timeout_ms = 1000
    no_signals_timeout_ms = 10
    poll_timeout_ms = 2
    optional_timeout_ms = 200  # an unimplemented OPTIONAL rule is an xfail after this wait


class _FailedPublisher:
    """on_subscribe, then on_error: the 'failed publisher' of the Publisher rules 1.4 / 1.9."""

    def subscribe(self, subscriber: Any) -> None:
        if subscriber is None:
            raise TypeError("subscribe(None)")

        class _Noop:
            def request(self, n: int) -> None:
                pass

            def cancel(self) -> None:
                pass

        subscriber.on_subscribe(_Noop())
        subscriber.on_error(RuntimeError("failed publisher"))


class TestSyncRangePublisher(_Fast, PublisherVerification[int]):
    def create_publisher(self, elements: int) -> SyncRangePublisher:
        return SyncRangePublisher(0, elements)

    def create_failed_publisher(self) -> _FailedPublisher:
        return _FailedPublisher()


class TestThreadPoolIterablePublisher(_Fast, PublisherVerification[int]):
    stochastic_iterations = 20

    def create_publisher(self, elements: int) -> ThreadPoolIterablePublisher[int]:
        return ThreadPoolIterablePublisher(range(elements))

    def create_failed_publisher(self) -> _FailedPublisher:
        return _FailedPublisher()


class TestAsyncioIterablePublisher(_Fast, PublisherVerification[int]):
    stochastic_iterations = 20

    def create_publisher(self, elements: int) -> AsyncioIterablePublisher[int]:
        return AsyncioIterablePublisher(range(elements))


class _ProbedSync(SyncSubscriber[int]):
    def __init__(self, probe: WhiteboxSubscriberProbe[int]) -> None:
        super().__init__()
        self.probe = probe

    def on_subscribe(self, subscription: Any) -> None:
        first = self._subscription is None and not self._done
        super().on_subscribe(subscription)
        if first:
            self.probe.register_on_subscribe(self)

    def when_next(self, item: int) -> bool:
        self.probe.register_on_next(item)
        return True

    def when_complete(self) -> None:
        self.probe.register_on_complete()

    def when_error(self, error: BaseException) -> None:
        self.probe.register_on_error(error)


class _ProbedAsync(AsyncSubscriber[int]):
    def __init__(self, probe: WhiteboxSubscriberProbe[int]) -> None:
        super().__init__()
        self.probe = probe
        self._registered = False

    def on_subscribe(self, subscription: Any) -> None:
        super().on_subscribe(subscription)
        if not self._registered:
            self._registered = True
            self.probe.register_on_subscribe(self)

    def when_next(self, item: int) -> bool:
        self.probe.register_on_next(item)
        return True

    def when_complete(self) -> None:
        self.probe.register_on_complete()

    def when_error(self, error: BaseException) -> None:
        self.probe.register_on_error(error)


class TestSyncSubscriberWhitebox(_Fast, SubscriberWhiteboxVerification[int]):
    def create_subscriber(self, probe: WhiteboxSubscriberProbe[int]) -> _ProbedSync:
        return _ProbedSync(probe)


class TestAsyncSubscriberWhitebox(_Fast, SubscriberWhiteboxVerification[int]):
    def create_subscriber(self, probe: WhiteboxSubscriberProbe[int]) -> _ProbedAsync:
        return _ProbedAsync(probe)


class TestSyncSubscriberBlackbox(_Fast, SubscriberBlackboxVerification[int]):
    def create_subscriber(self) -> SyncSubscriber[int]:
        return SyncSubscriber()


class TestAsyncSubscriberBlackbox(_Fast, SubscriberBlackboxVerification[int]):
    def create_subscriber(self) -> AsyncSubscriber[int]:
        return AsyncSubscriber()


class TestIdentityProcessor(_Fast, IdentityProcessorVerification[int]):
    stochastic_iterations = 20

    def create_identity_processor(self, buffer_size: int) -> IdentityProcessor[int]:
        return IdentityProcessor(buffer_size)

    def create_failed_publisher(self) -> _FailedPublisher:
        return _FailedPublisher()

    def does_coordinated_emission(self) -> bool:
        return True


class TestSyncSubscriberWithAsyncioHelper(_Fast, SubscriberWhiteboxVerification[int]):
    """The helper publisher in its asyncio form (signals on an event loop thread)."""

    def create_subscriber(self, probe: WhiteboxSubscriberProbe[int]) -> _ProbedSync:
        return _ProbedSync(probe)

    def create_helper_publisher(self, elements: int) -> AsyncioIterablePublisher[int]:
        return AsyncioIterablePublisher(range(elements))


class TestAsyncSubscriberWithSyncHelper(_Fast, SubscriberBlackboxVerification[int]):
    """The helper publisher in its synchronous form (signals on the requesting thread)."""

    def create_subscriber(self) -> AsyncSubscriber[int]:
        return AsyncSubscriber()

    def create_helper_publisher(self, elements: int) -> SyncRangePublisher:
        return SyncRangePublisher(0, elements)
