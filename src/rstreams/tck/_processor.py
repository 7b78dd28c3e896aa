"""IdentityProcessorVerification: a Processor tested as a Publisher, as a Subscriber, and on its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from .._spec import MAX_DEMAND, Processor, Publisher, Subscriber, Subscription, violation
from ._base import MappedRange, VerificationBase, kit_tests
from ._env import ManualPublisher, ManualSubscriber, TestEnvironment, WhiteboxSubscriberProbe
from ._outcomes import fail, skip, tck_test
from ._publisher import PublisherVerification
from ._reference import ThreadPoolIterablePublisher
from ._subscriber import SubscriberWhiteboxVerification

__all__ = ["IdentityProcessorVerification"]

T = TypeVar("T")


class _ProbePuppet:
    """Downstream of the Processor under test: forwards signals to the whitebox probe."""

    def __init__(self, probe: WhiteboxSubscriberProbe[Any]) -> None:
        self._probe = probe
        self._subscription: Subscription | None = None

    def on_subscribe(self, subscription: Subscription) -> None:
        if self._subscription is not None:
            subscription.cancel()
            return
        self._subscription = subscription
        self._probe.register_on_subscribe(self)

    def on_next(self, item: Any) -> None:
        self._probe.register_on_next(item)

    def on_error(self, error: BaseException) -> None:
        self._probe.register_on_error(error)

    def on_complete(self) -> None:
        self._probe.register_on_complete()

    def trigger_request(self, n: int) -> None:
        s = self._subscription
        if s is not None:
            s.request(n)

    def signal_cancel(self) -> None:
        s = self._subscription
        if s is not None:
            s.cancel()


class _AsPublisher(PublisherVerification[Any]):
    """The Processor seen as a Publisher: fed by the helper publisher."""

    __test__ = False

    def __init__(self, outer: IdentityProcessorVerification[Any]) -> None:
        self._outer = outer
        self.stochastic_iterations = outer.stochastic_iterations

    def create_environment(self) -> TestEnvironment:
        return self._outer.create_environment()

    def create_publisher(self, elements: int) -> Publisher[Any]:
        outer = self._outer
        processor = outer.create_identity_processor(outer.processor_buffer_size)
        outer.create_helper_publisher(elements).subscribe(processor)
        return processor

    def create_failed_publisher(self) -> Publisher[Any] | None:
        return self._outer.create_failed_publisher()

    def max_elements_from_publisher(self) -> int:
        return self._outer.max_elements_from_publisher()

    def bounded_depth_of_on_next_and_request_recursion(self) -> int:
        return self._outer.bounded_depth_of_on_next_and_request_recursion()

    def skip_stochastic_tests(self) -> bool:
        return self._outer.skip_stochastic_tests()


class _AsSubscriber(SubscriberWhiteboxVerification[Any]):
    """The Processor seen as a whitebox Subscriber: a probe-forwarding Subscriber downstream."""

    __test__ = False

    def __init__(self, outer: IdentityProcessorVerification[Any]) -> None:
        self._outer = outer

    def create_environment(self) -> TestEnvironment:
        return self._outer.create_environment()

    def create_subscriber(self, probe: WhiteboxSubscriberProbe[Any]) -> Subscriber[Any]:
        outer = self._outer
        processor = outer.create_identity_processor(outer.processor_buffer_size)
        processor.subscribe(_ProbePuppet(probe))
        return processor

    def create_element(self, element: int) -> Any:
        return self._outer.create_element(element)


def _delegate(name: str, factory: Callable[[IdentityProcessorVerification[Any]], Any]) -> Callable[..., None]:
    target = getattr(PublisherVerification, name, None) or getattr(SubscriberWhiteboxVerification, name)

    def run(self: IdentityProcessorVerification[Any]) -> None:
        getattr(factory(self), name)()

    run.__name__ = name
    run.__qualname__ = f"IdentityProcessorVerification.{name}"
    run.__doc__ = target.__doc__
    run.__tck_rule__ = target.__tck_rule__  # type: ignore[attr-defined]
    run.__tck_kind__ = target.__tck_kind__  # type: ignore[attr-defined]
    run.__tck_test__ = True  # type: ignore[attr-defined]
    return run


class IdentityProcessorVerification(VerificationBase, Generic[T]):
    """Verifies an identity Processor (rules 4.1, 4.2): every Publisher test and every whitebox
    Subscriber test run against it (delegation), plus three tests of its own.

    Example::

        from rstreams.tck import IdentityProcessorVerification, IdentityProcessor

        class TestIdentity(IdentityProcessorVerification):
            def create_identity_processor(self, buffer_size): return IdentityProcessor(buffer_size)
            def does_coordinated_emission(self): return True

    Knobs: :attr:`processor_buffer_size` (16), :meth:`max_supported_subscribers` (below 2, the
    multi-Subscriber tests skip), :meth:`does_coordinated_emission` (emits only when every Subscriber
    has demand), and the Publisher knobs (:meth:`max_elements_from_publisher` ...).
    """

    __test__ = False

    processor_buffer_size: int = 16
    stochastic_iterations: int = 100

    # -- what the user provides ---------------------------------------------------------------------
    def create_identity_processor(self, buffer_size: int) -> Processor[T, T]:
        """Return the Processor under test; it may buffer up to ``buffer_size`` elements."""
        raise NotImplementedError(f"{type(self).__name__} must implement create_identity_processor(buffer_size)")

    def create_failed_publisher(self) -> Publisher[T] | None:
        return None

    def create_element(self, element: int) -> T:
        return element  # type: ignore[return-value]

    def create_helper_publisher(self, elements: int) -> Publisher[T]:
        return ThreadPoolIterablePublisher(MappedRange(elements, self.create_element))

    # -- knobs ---------------------------------------------------------------------------------------
    def max_elements_from_publisher(self) -> int:
        return MAX_DEMAND - 1

    def bounded_depth_of_on_next_and_request_recursion(self) -> int:
        return 1

    def skip_stochastic_tests(self) -> bool:
        return False

    def max_supported_subscribers(self) -> int:
        return MAX_DEMAND

    def does_coordinated_emission(self) -> bool:
        return False

    # -- own tests -----------------------------------------------------------------------------------
    def _setup(self) -> tuple[Processor[T, T], ManualPublisher[T]]:
        processor = self.create_identity_processor(self.processor_buffer_size)
        upstream: ManualPublisher[T] = ManualPublisher(self.env)
        upstream.subscribe(processor)
        return processor, upstream

    def _downstream(self, processor: Processor[T, T], name: str) -> ManualSubscriber[T]:
        sub: ManualSubscriber[T] = ManualSubscriber(self.env, name=name)
        try:
            processor.subscribe(sub)
        except Exception as exc:  # noqa: BLE001
            fail(violation("1.9", f"subscribe() raised {type(exc).__name__}: {exc}"))
        sub.subscription()
        return sub

    def _require_two_subscribers(self) -> None:
        if self.max_supported_subscribers() < 2:
            skip(f"needs 2 Subscribers but max_supported_subscribers() = {self.max_supported_subscribers()}")

    def _expect_element(self, sub: ManualSubscriber[T], element: T, message: str) -> None:
        got = sub.next_element(message)
        if got != element:
            fail(violation("4.1", f"{sub.name} received {got!r} where {element!r} was sent (identity Processor)"))

    _COORDINATION_HINT = (
        " (a Processor that requests/emits only when every Subscriber has demand must override "
        "does_coordinated_emission() to return True)"
    )

    @tck_test("1.4")
    def test_required_spec104_must_call_on_error_on_all_its_subscribers_if_it_encounters_a_non_recoverable_error(
        self,
    ) -> None:
        """As the JVM kit: two Subscribers; without coordinated emission only the first requests (1, gets
        the element, requests 1 more) while the second never does; the upstream on_error must reach both."""
        self._require_two_subscribers()
        processor, upstream = self._setup()
        sub1 = self._downstream(processor, "downstream 1")
        sub2 = self._downstream(processor, "downstream 2")
        element = self.create_element(0)
        if self.does_coordinated_emission():
            sub1.request(1)
            sub2.request(1)
            upstream.subscription.expect_request(violation("2.1", "the Processor did not request from its upstream"))
            upstream.send_next(element)
            for s in (sub1, sub2):
                self._expect_element(s, element, violation("1.1", f"{s.name} did not receive the element it requested"))
            sub1.request(1)
            sub2.request(1)
        else:
            hint = self._COORDINATION_HINT
            sub1.request(1)
            upstream.subscription.expect_request(
                violation("2.1", "the Processor did not request from its upstream when downstream 1 requested" + hint)
            )
            upstream.send_next(element)
            self._expect_element(
                sub1, element, violation("1.1", "downstream 1 did not receive the element it requested" + hint)
            )
            sub1.request(1)
        error = RuntimeError("rstreams.tck: upstream failure")
        upstream.send_error(error)
        for s in (sub1, sub2):
            got_error = s.expect_error(
                (BaseException,), violation("4.2", f"the upstream on_error did not reach {s.name}")
            )
            if got_error is not error:
                fail(violation("4.2", f"{s.name} got on_error({got_error!r}) where {error!r} was signalled"))
        self.env.verify_no_violations()

    @tck_test("4.2")
    def test_must_immediately_pass_on_on_error_events_received_from_its_upstream_to_its_downstream(self) -> None:
        processor, upstream = self._setup()
        sub = self._downstream(processor, "downstream")
        error = RuntimeError("rstreams.tck: upstream failure")
        upstream.send_error(error)
        got = sub.expect_error(
            (BaseException,), violation("4.2", "the upstream on_error must reach the downstream without any request")
        )
        if got is not error:
            fail(violation("4.2", f"the downstream got on_error({got!r}) where {error!r} was signalled"))
        self.env.verify_no_violations()

    @tck_test("2.1")
    def test_required_must_request_from_upstream_for_elements_that_have_been_requested_long_ago(self) -> None:
        """The JVM kit's choreography: downstream 1 requests 20; two elements flow; downstream 2 joins
        without demand; a third element reaches downstream 1 (without coordinated emission) and, once
        downstream 2 requests 1, downstream 2 as well (it subscribed before that element was sent); the
        Processor keeps asking its upstream for downstream 1's old demand. Then (a Python addition) 12
        more elements with both Subscribers asking, and the completion must reach both."""
        self._require_two_subscribers()
        processor, upstream = self._setup()
        sub1 = self._downstream(processor, "downstream 1")
        sub1.request(20)
        coordinated = self.does_coordinated_emission()
        hint = "" if coordinated else self._COORDINATION_HINT
        sent = 0

        def await_upstream_demand(message: str) -> None:
            if not upstream.subscription.await_outstanding_demand(sent, self.env.timeout):
                fail(violation("2.1", f"{message} (the upstream was asked for {sent} elements, all sent)" + hint))

        def send() -> T:
            nonlocal sent
            await_upstream_demand(
                "the Processor stopped requesting from upstream although its downstream still has demand"
            )
            element = self.create_element(sent)
            upstream.send_next(element)
            sent += 1
            return element

        for _ in range(2):
            self._expect_element(sub1, send(), violation("1.1", "downstream 1 did not receive an element it requested"))
        sub2 = self._downstream(processor, "downstream 2")
        no_demand = violation("1.1", "downstream 2 received a signal before requesting anything")
        if coordinated:
            sub2.expect_none(no_demand)
            sub2.request(1)
            z = send()
            self._expect_element(sub1, z, violation("2.1", "downstream 1 did not receive an element it requested long ago"))
            self._expect_element(sub2, z, violation("1.1", "downstream 2 did not receive the element it requested"))
        else:
            z = send()
            self._expect_element(
                sub1, z, violation("2.1", "downstream 1 did not receive an element it requested long ago" + hint)
            )
            sub2.expect_none(no_demand)
            sub2.request(1)
            self._expect_element(
                sub2,
                z,
                violation(
                    "4.1",
                    f"downstream 2 subscribed before {z!r} was sent but did not receive it after request(1)",
                ),
            )
        await_upstream_demand("the Processor did not ask its upstream for the 17 elements downstream 1 still awaits")
        sub2.request(12)
        for _ in range(12):
            element = send()
            for s in (sub1, sub2):
                self._expect_element(s, element, violation("2.1", f"{s.name} did not receive an element it requested"))
        upstream.send_completion()
        for s in (sub1, sub2):
            s.expect_completion(violation("1.5", f"the upstream on_complete did not reach {s.name}"))
        self.env.verify_no_violations(delay=False)


def _install() -> None:
    own = set(vars(IdentityProcessorVerification))
    for name in kit_tests(PublisherVerification):
        if name not in own:
            setattr(IdentityProcessorVerification, name, _delegate(name, _AsPublisher))
    for name in kit_tests(SubscriberWhiteboxVerification):
        if name in own or name in vars(IdentityProcessorVerification):
            raise RuntimeError(f"rstreams.tck: test name clash in IdentityProcessorVerification: {name}")
        setattr(IdentityProcessorVerification, name, _delegate(name, _AsSubscriber))


_install()
