"""The kit's meta-test helpers: run one kit test programmatically and require an outcome.

They mirror the JVM kit's requireTestFailure / requireTestSkip / requireOptionalTestPass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rstreams.tck._base import VerificationBase
from rstreams.tck._cli import build_verification
from rstreams.tck._runner import TestResult, run_test

#: short timeouts: every self-test waits at least once for "no signal"
FAST: dict[str, int] = {"timeout_ms": 250, "no_signals_timeout_ms": 30}


def verification(kind: str, factory: Callable[..., Any], **kwargs: Any) -> type[VerificationBase]:
    """A verification class of ``kind`` for ``factory`` with short timeouts."""
    opts = dict(FAST)
    opts.update(kwargs)
    cls = build_verification(kind, factory, **opts)
    cls.poll_timeout_ms = 2  # type: ignore[attr-defined]
    cls.publisher_reference_gc_timeout_ms = 100  # type: ignore[attr-defined]
    return cls


def require_failure(cls: type[VerificationBase], name: str, *fragments: str) -> TestResult:
    """The kit test ``name`` must FAIL and its message must contain every fragment."""
    result = run_test(cls, name)
    assert result.outcome == "FAILED", f"{name}: expected FAILED, got {result.outcome}: {result.message}"
    for fragment in fragments:
        assert fragment in result.message, f"{name}: {fragment!r} not in the failure message {result.message!r}"
    return result


def require_pass(cls: type[VerificationBase], name: str) -> TestResult:
    result = run_test(cls, name)
    assert result.outcome == "passed", f"{name}: expected a pass, got {result.outcome}: {result.message}"
    return result


def require_skip(cls: type[VerificationBase], name: str, *fragments: str) -> TestResult:
    result = run_test(cls, name)
    assert result.outcome in ("skipped", "untested"), f"{name}: expected a skip, got {result.outcome}: {result.message}"
    for fragment in fragments:
        assert fragment in result.message, f"{name}: {fragment!r} not in the skip reason {result.message!r}"
    return result


def require_optional_failure(cls: type[VerificationBase], name: str, *fragments: str) -> TestResult:
    """An OPTIONAL test the implementation does not implement: a visible xfail naming the rule."""
    result = run_test(cls, name)
    assert result.outcome == "xfail-optional", f"{name}: expected xfail, got {result.outcome}: {result.message}"
    assert "does NOT implement OPTIONAL rule" in result.message
    for fragment in fragments:
        assert fragment in result.message, f"{name}: {fragment!r} not in the xfail reason {result.message!r}"
    return result
