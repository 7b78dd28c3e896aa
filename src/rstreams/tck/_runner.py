"""Running a verification without pytest collection (the CLI and the kit's self-tests use this)."""

from __future__ import annotations

import contextlib
import io
import textwrap
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ._base import VerificationBase, kit_tests
from ._outcomes import FailOutcome, SkipOutcome, XFailOutcome

__all__ = ["TestResult", "run_test", "run_verification", "format_table", "has_required_failures"]

#: outcome names
PASSED = "passed"
FAILED = "FAILED"
SKIPPED = "skipped"
UNTESTED = "untested"
XFAIL = "xfail-optional"
ERROR = "ERROR"


@dataclass
class TestResult:
    """The outcome of one kit test.

    Example::

        r = run_test(TestSyncRange, "test_required_spec309_request_zero_must_signal_value_error")
        r.rule, r.kind, r.outcome            # ('3.9', 'required', 'passed')
    """

    __test__ = False

    name: str
    rule: str
    kind: str
    outcome: str
    message: str = ""
    seconds: float = 0.0
    observations: list[str] = field(default_factory=list)

    @property
    def is_required_failure(self) -> bool:
        """A failure that fails the verification: optional rules not implemented are ``xfail``, never
        FAILED, so a FAILED optional test (``optional_spec104`` with a misbehaving failed Publisher) counts."""
        return self.outcome in (FAILED, ERROR) and self.kind != "untested"


#: a kit test that has not finished after this many seconds is reported as hung (the call into the
#: implementation never returned); its daemon thread is abandoned.
HANG_TIMEOUT_S = 60.0


def run_test(
    verification: type[VerificationBase] | VerificationBase, name: str, *, hang_timeout: float = HANG_TIMEOUT_S
) -> TestResult:
    """Run one kit test on a fresh instance (like pytest does) and classify its outcome.

    The test runs on a daemon thread: if a call into the implementation never returns, the result
    is an ERROR after ``hang_timeout`` seconds instead of a hang.

    Example::

        class TestSyncRange(PublisherVerification):
            def create_publisher(self, n): return SyncRangePublisher(0, n)
            def create_failed_publisher(self): return None
        run_test(TestSyncRange, "test_required_spec309_request_zero_must_signal_value_error").outcome
        # 'passed'
    """
    cls = verification if isinstance(verification, type) else type(verification)
    method = getattr(cls, name)
    rule = getattr(method, "__tck_rule__", "?")
    kind = getattr(method, "__tck_kind__", "required")
    instance: Any = cls() if isinstance(verification, type) else verification
    started = time.monotonic()
    outcome, message = PASSED, ""
    observations: list[str] = []
    outcome_box: list[BaseException | None] = []

    def body() -> None:
        try:
            getattr(instance, name)()
            outcome_box.append(None)
        except BaseException as exc:  # noqa: BLE001 - classified below, on the caller's thread
            outcome_box.append(exc)

    worker = threading.Thread(target=body, name=f"rstreams-tck-{name[:40]}", daemon=True)
    with contextlib.redirect_stdout(io.StringIO()):  # observations are shown in the table instead
        worker.start()
        worker.join(hang_timeout)
    try:
        if not outcome_box:
            raise TimeoutError(f"the test did not finish within {hang_timeout:.0f} s (a call never returned?)")
        if outcome_box[0] is not None:
            raise outcome_box[0]
    except SkipOutcome as exc:
        outcome = UNTESTED if kind == "untested" else SKIPPED
        message = _msg(exc)
    except XFailOutcome as exc:
        outcome = XFAIL
        message = _msg(exc)
    except (AssertionError, FailOutcome) as exc:
        outcome = FAILED
        message = _msg(exc)
    except Exception as exc:  # noqa: BLE001 - a crash of the implementation (or of a kit hook)
        outcome = ERROR
        message = f"{type(exc).__name__}: {exc}"
    env = getattr(instance, "_last_env", None)
    if env is not None:
        observations = list(env.observations)
    return TestResult(name, rule, kind, outcome, message, time.monotonic() - started, observations)


def _msg(exc: BaseException) -> str:
    msg = getattr(exc, "msg", None)
    if isinstance(msg, str) and msg:
        return msg
    return str(exc) or type(exc).__name__


def run_verification(
    verification: type[VerificationBase] | VerificationBase,
    *,
    select: str | None = None,
) -> list[TestResult]:
    """Run every kit test of ``verification`` (a class or an instance); ``select``: substring filter.

    Example::

        results = run_verification(TestSyncRange, select="spec309")   # TestSyncRange: see run_test
        [r.outcome for r in results]                                  # ['passed', ...] (6 tests)
    """
    cls = verification if isinstance(verification, type) else type(verification)
    names = [n for n in kit_tests(cls) if select is None or select in n]
    return [run_test(verification, n) for n in names]


def has_required_failures(results: list[TestResult]) -> bool:
    return any(r.is_required_failure for r in results)


def format_table(results: list[TestResult], width: int = 100) -> str:
    """A rule-by-rule table: test, rule, kind, outcome (and the reason for anything but a pass).

    Example::

        print(format_table(run_verification(TestSyncRange, select="spec309")))
        # rule   kind       outcome         test
        # 3.9    required   passed          test_required_spec309_request_zero_must_signal_value_error
        # ...
        # 6 passed (6 tests)
    """
    lines = [f"{'rule':<6} {'kind':<10} {'outcome':<15} test", "-" * width]
    for r in sorted(results, key=lambda r: (_rule_key(r.rule), r.name)):
        lines.append(f"{r.rule:<6} {r.kind:<10} {r.outcome:<15} {r.name}")
        if r.outcome != PASSED and r.message:
            text = r.message.split("; rule ")[0] if r.outcome == UNTESTED else r.message
            lines.extend(_wrapped("-> ", text, width))
        for note in r.observations:
            lines.extend(_wrapped("observed: ", note, width))
    counts: dict[str, int] = {}
    for r in results:
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
    lines.append("-" * width)
    lines.append(", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + f" ({len(results)} tests)")
    return "\n".join(lines)


def _wrapped(label: str, text: str, width: int) -> list[str]:
    """``text`` under a result line, wrapped to ``width`` (never cut: the whole rule is in it)."""
    indent = " " * 35
    return textwrap.wrap(
        text,
        width=max(width, len(indent) + 40),
        initial_indent=indent + label,
        subsequent_indent=indent + " " * len(label),
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent + label]


def _rule_key(rule: str) -> tuple[int, int]:
    try:
        a, b = rule.split(".")
        return (int(a), int(b))
    except ValueError:
        return (0, 0)
