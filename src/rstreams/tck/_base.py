"""What the four verification classes share: pytest collection control, timeouts, test discovery."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from ._env import TestEnvironment

__all__ = ["VerificationBase", "kit_tests", "MappedRange"]

T = TypeVar("T")


class VerificationBase:
    """Base of the verification classes.

    The base classes set ``__test__ = False`` so pytest never collects them; every subclass gets
    ``__test__ = True`` (unless it sets ``__test__`` itself), so ``class TestMine(PublisherVerification)``
    is collected like any pytest test class. Timeouts: ``None`` means the environment variable
    (``RSTREAMS_TCK_TIMEOUT_MS`` ...) or the kit's default.
    """

    __test__: ClassVar[bool] = False

    #: how long to wait for an expected signal (ms)
    default_timeout_ms: ClassVar[int | None] = None
    #: how long to wait to conclude that no signal arrives (ms)
    no_signals_timeout_ms: ClassVar[int | None] = None
    #: the poll step (ms)
    poll_timeout_ms: ClassVar[int | None] = None
    #: how long rule 3.13 waits for the Publisher to drop its reference to a cancelled Subscriber (ms)
    publisher_reference_gc_timeout_ms: ClassVar[int | None] = None
    #: how long an OPTIONAL test waits for an expected signal (ms); ``None``: the environment variable
    #: ``RSTREAMS_TCK_OPTIONAL_TIMEOUT_MS``, else the expected-signal timeout. A shorter wait only turns
    #: a slow optional behaviour into an ``xfail`` sooner; required tests keep the full timeout.
    optional_timeout_ms: ClassVar[int | None] = None
    #: per OPTIONAL rule, how long its tests wait for an expected signal (ms), instead of
    #: ``optional_timeout_ms``: e.g. ``{"1.10": 20}`` when the rejection of a second subscribe of the
    #: same Subscriber, where implemented, is signalled inside ``subscribe()`` (no wait needed)
    optional_rule_timeouts_ms: ClassVar[Mapping[str, int]] = {}

    env: TestEnvironment

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__test__" not in cls.__dict__:
            cls.__test__ = True

    def create_environment(self) -> TestEnvironment:
        """A fresh environment for one test (override to customise timeouts programmatically)."""
        return TestEnvironment(
            self.default_timeout_ms,
            self.no_signals_timeout_ms,
            self.poll_timeout_ms,
            self.publisher_reference_gc_timeout_ms,
            self.optional_timeout_ms,
        )


def kit_tests(cls: type) -> list[str]:
    """The names of the kit tests of ``cls``, in definition order (base classes first)."""
    names: list[str] = []
    seen: set[str] = set()
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if name.startswith("test_") and getattr(value, "__tck_test__", False) and name not in seen:
                seen.add(name)
                names.append(name)
    return [n for n in names if getattr(getattr(cls, n, None), "__tck_test__", False)]


class MappedRange(Generic[T]):
    """``create_element(i) for i in range(n)``, iterable any number of times (one pass per Subscriber)."""

    def __init__(self, n: int, create: Callable[[int], T]) -> None:
        self.n = n
        self.create = create

    def __iter__(self) -> Iterator[T]:
        create = self.create
        return (create(i) for i in range(self.n))


def as_iterable(n: int, create: Callable[[int], T]) -> Iterable[T]:
    return MappedRange(n, create)
