"""Test kinds, outcomes and the decorator that gives every kit test its metadata.

Every test of the kit is a method ``test_<kind>_<name>`` where ``kind`` is one of ``required``,
``optional``, ``stochastic`` or ``untested`` (a name without one of these prefixes is required, like
the JVM's ``mustImmediatelyPassOnOnErrorEvents...``). The :func:`tck_test` decorator records the rule
and the kind on the function and gives every run a fresh :class:`~rstreams.tck.TestEnvironment`.

Outcomes are pytest's own exceptions when pytest is installed, so a verification runs unchanged under
pytest and under the CLI runner: an :class:`AssertionError` (or ``pytest.fail``) is a failure,
``pytest.skip`` a skip, and ``pytest.xfail`` the visible outcome of an OPTIONAL rule the implementation
does not implement. Without pytest (``pip install rstreams`` has no pytest; ``rstreams tck`` and
:func:`~rstreams.tck.run_verification` must work there) the kit raises its own outcome exceptions of the
same shape (``BaseException`` subclasses with a ``msg``), which the runner classifies the same way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, NoReturn, TypeVar

from .._spec import RULES

if TYPE_CHECKING:
    from ._env import TestEnvironment

__all__ = [
    "KINDS",
    "TckFailure",
    "tck_test",
    "kind_of",
    "rule_of",
    "fail",
    "skip",
    "xfail",
    "SkipOutcome",
    "XFailOutcome",
    "FailOutcome",
]

KINDS: Final = ("required", "optional", "stochastic", "untested")


class _KitOutcome(BaseException):
    """An outcome raised when pytest is not installed (BaseException, like pytest's, so a kit test's
    ``except Exception`` never swallows it)."""

    def __init__(self, msg: str = "") -> None:
        super().__init__(msg)
        self.msg = msg


class _KitSkip(_KitOutcome):
    """The kit's skip outcome without pytest."""


class _KitXFail(_KitOutcome):
    """The kit's xfail outcome (an OPTIONAL rule not implemented) without pytest."""


class _KitFail(_KitOutcome):
    """The kit's fail outcome without pytest."""


def _outcome_classes() -> tuple[type[BaseException], type[BaseException], type[BaseException]]:
    # pytest's own classes when pytest is importable, so pytest reports a kit skip as a skip and an
    # unimplemented OPTIONAL rule as an xfail; the kit's classes otherwise (the CLI, a plain install).
    try:
        import pytest
    except ImportError:
        return _KitSkip, _KitXFail, _KitFail
    return pytest.skip.Exception, pytest.xfail.Exception, pytest.fail.Exception


#: the outcome exception classes: pytest's when pytest is installed, else the kit's own.
_CLASSES: Final = _outcome_classes()
SkipOutcome: Final[type[BaseException]] = _CLASSES[0]
XFailOutcome: Final[type[BaseException]] = _CLASSES[1]
FailOutcome: Final[type[BaseException]] = _CLASSES[2]

F = TypeVar("F", bound=Callable[..., None])


class TckFailure(AssertionError):
    """A rule violation found by the kit; the message always names the rule."""


def fail(message: str) -> NoReturn:
    """Fail the current kit test with ``message`` (which names the broken rule)."""
    raise TckFailure(message)


def skip(reason: str) -> NoReturn:
    """Skip the current kit test (config-gated tests and untested rules)."""
    raise SkipOutcome(reason)


def xfail(reason: str) -> NoReturn:
    """Report an OPTIONAL rule that the implementation does not implement (visible, never silent)."""
    raise XFailOutcome(reason)


_SPEC_RE: Final = re.compile(r"spec(\d)(\d\d)")


def kind_of(name: str) -> str:
    """The kind of a kit test from its name: ``test_optional_spec111_...`` -> ``"optional"``."""
    bare = name[5:] if name.startswith("test_") else name
    for kind in KINDS:
        if bare.startswith(kind + "_"):
            return kind
    return "required"


def rule_of(name: str) -> str:
    """The rule of a kit test from its name: ``..._spec309_...`` -> ``"3.9"``; ``"setup"`` otherwise."""
    m = _SPEC_RE.search(name)
    if m is None:
        return "setup"
    return f"{m.group(1)}.{int(m.group(2))}"


def tck_test(rule: str | None = None, *, optional_fails_hard: bool = False) -> Callable[[F], F]:
    """Decorate a kit test: record ``__tck_rule__``/``__tck_kind__`` and give it a fresh environment.

    * ``untested`` tests skip with a reason naming the rule (their bodies are never run);
    * ``optional`` tests turn a failure into ``pytest.xfail("does NOT implement OPTIONAL rule ...")``,
      unless ``optional_fails_hard``: then a failure stays a failure (the JVM kit's
      ``optional_spec104_mustSignalOnErrorWhenFails`` is "optional" only in that it skips when no
      failed Publisher is given; a failed Publisher that misbehaves fails it);
    * every test gets ``self.env`` (a new :class:`TestEnvironment`) and the environment is closed
      (threads stopped, resources released) whatever the outcome.
    """

    def decorate(fn: F) -> F:
        kind = kind_of(fn.__name__)
        the_rule = rule or rule_of(fn.__name__)

        @functools.wraps(fn)
        def run(self: Any, *args: Any, **kwargs: Any) -> None:
            if kind == "untested":
                text = RULES.get(the_rule, "")
                note = fn.__doc__.strip().splitlines()[0] if fn.__doc__ else ""
                if note.startswith("test_"):
                    note = "checked instead by " + note
                skip(
                    f"untested: rule {the_rule} is not verified by this JVM-named test"
                    + (f" ({note})" if note else "")
                    + (f"; rule {the_rule}: {text}" if text else "")
                )
            env: TestEnvironment = self.create_environment()
            if kind == "optional" and not optional_fails_hard:
                # a failure here is only an xfail: wait for expected signals as long as the kit's user
                # allows optional tests to (the full timeout unless optional_timeout_ms is set)
                per_rule = getattr(self, "optional_rule_timeouts_ms", None) or {}
                env.timeout_ms = per_rule.get(the_rule, env.optional_timeout_ms)
            previous = getattr(self, "env", None)
            self.env = env
            try:
                if kind == "optional" and not optional_fails_hard:
                    try:
                        _run_reporting_violations(fn, self, env, args, kwargs)
                    except (Exception, FailOutcome) as exc:
                        xfail(f"does NOT implement OPTIONAL rule {the_rule}: {_message(exc)}")
                else:
                    _run_reporting_violations(fn, self, env, args, kwargs)
            finally:
                env.close()
                self.env = previous
                self._last_env = env

        run.__tck_rule__ = the_rule  # type: ignore[attr-defined]
        run.__tck_kind__ = kind  # type: ignore[attr-defined]
        run.__tck_test__ = True  # type: ignore[attr-defined]
        return run  # type: ignore[return-value]

    return decorate


def _run_reporting_violations(
    fn: Callable[..., None], self: Any, env: TestEnvironment, args: Any, kwargs: Any
) -> None:
    """Run ``fn``; if it fails while violations were recorded, report the first violation (the root
    cause, often noticed on another thread) followed by the expectation that failed."""
    try:
        fn(self, *args, **kwargs)
    except (AssertionError, FailOutcome) as exc:
        found = env.violations
        text = _message(exc)
        if found and found[0] not in text:
            fail(f"{found[0]} (then: {text})")
        raise


def _message(exc: BaseException) -> str:
    msg = getattr(exc, "msg", None)
    if isinstance(msg, str):
        return msg
    return str(exc) or type(exc).__name__
