"""The kit's shape: JVM names and counts, kinds, pytest collection, environment, CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from rstreams.tck import (
    IdentityProcessorVerification,
    PublisherVerification,
    SubscriberBlackboxVerification,
    SubscriberWhiteboxVerification,
    TestEnvironment,
)
from rstreams.tck._base import VerificationBase, kit_tests
from rstreams.tck._cli import main
from rstreams.tck._outcomes import tck_test


def _jvm(cls: type) -> list[str]:
    return [n for n in kit_tests(cls) if "_py_" not in n]


@pytest.mark.parametrize(
    ("cls", "expected"),
    [
        (PublisherVerification, {"required": 22, "optional": 8, "stochastic": 1, "untested": 7}),
        (SubscriberWhiteboxVerification, {"required": 14, "untested": 13}),
        (SubscriberBlackboxVerification, {"required": 11, "untested": 15}),
    ],
)
def test_jvm_test_counts_per_kind(cls: type, expected: dict[str, int]) -> None:
    assert Counter(getattr(cls, n).__tck_kind__ for n in _jvm(cls)) == expected


def test_94_distinct_jvm_tests() -> None:
    names = set(_jvm(PublisherVerification)) | set(_jvm(SubscriberWhiteboxVerification))
    names |= set(_jvm(SubscriberBlackboxVerification))
    own = set(_jvm(IdentityProcessorVerification)) - names
    assert len(own) == 3
    assert len(names | own) == 94


def test_python_additions_are_real_checks_with_rules() -> None:
    for cls in (PublisherVerification, SubscriberWhiteboxVerification, SubscriberBlackboxVerification):
        for n in kit_tests(cls):
            fn = getattr(cls, n)
            assert fn.__tck_rule__ != "setup" or "validate" in n or "create_publisher" in n or "happy" in n, n
            if "_py_" in n:
                assert fn.__tck_kind__ in ("required", "optional"), n


def test_base_classes_are_not_collected_but_subclasses_are() -> None:
    for cls in (
        PublisherVerification,
        SubscriberWhiteboxVerification,
        SubscriberBlackboxVerification,
        IdentityProcessorVerification,
        TestEnvironment,
    ):
        assert cls.__dict__["__test__"] is False

    class TestMine(PublisherVerification[int]):
        pass

    assert TestMine.__test__ is True


def test_timeouts_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RSTREAMS_TCK_TIMEOUT_MS", "321")
    monkeypatch.setenv("DEFAULT_NO_SIGNALS_TIMEOUT_MILLIS", "45")
    monkeypatch.setenv("DEFAULT_POLL_TIMEOUT_MILLIS", "7")
    monkeypatch.setenv("PUBLISHER_REFERENCE_GC_TIMEOUT_MILLIS", "999")
    env = TestEnvironment()
    assert (env.timeout_ms, env.no_signals_timeout_ms, env.poll_timeout_ms, env.gc_timeout_ms) == (321, 45, 7, 999)
    assert TestEnvironment(timeout_ms=5).timeout_ms == 5  # explicit wins
    monkeypatch.setenv("RSTREAMS_TCK_TIMEOUT_MS", "soon")
    with pytest.raises(ValueError, match="RSTREAMS_TCK_TIMEOUT_MS"):
        TestEnvironment()


def test_defaults_without_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RSTREAMS_TCK_TIMEOUT_MS", "DEFAULT_TIMEOUT_MILLIS", "RSTREAMS_TCK_NO_SIGNALS_TIMEOUT_MS",
                 "DEFAULT_NO_SIGNALS_TIMEOUT_MILLIS"):
        monkeypatch.delenv(name, raising=False)
    env = TestEnvironment()
    assert (env.timeout_ms, env.no_signals_timeout_ms) == (200, 100)



def test_optional_timeout_shortens_only_optional_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RSTREAMS_TCK_OPTIONAL_TIMEOUT_MS", raising=False)
    assert TestEnvironment(timeout_ms=700).optional_timeout_ms == 700  # default: the expected-signal timeout
    assert TestEnvironment(timeout_ms=700, optional_timeout_ms=30).optional_timeout_ms == 30
    monkeypatch.setenv("RSTREAMS_TCK_OPTIONAL_TIMEOUT_MS", "40")
    assert TestEnvironment(timeout_ms=700).optional_timeout_ms == 40

    seen: dict[str, int] = {}

    class Probe(VerificationBase):
        __test__ = False
        default_timeout_ms = 700
        optional_timeout_ms = 30

        @tck_test()
        def test_required_spec102_probe(self) -> None:
            seen["required"] = self.env.timeout_ms

        @tck_test()
        def test_optional_spec111_probe(self) -> None:
            seen["optional"] = self.env.timeout_ms

    Probe().test_required_spec102_probe()
    Probe().test_optional_spec111_probe()
    assert seen == {"required": 700, "optional": 30}


def test_optional_rule_timeouts_set_the_wait_of_one_optional_rule() -> None:
    seen: dict[str, int] = {}

    class Probe(VerificationBase):
        __test__ = False
        default_timeout_ms = 700
        optional_timeout_ms = 300
        optional_rule_timeouts_ms = {"1.10": 20, "1.2": 5}

        @tck_test()
        def test_required_spec102_probe(self) -> None:  # a REQUIRED test keeps the full wait
            seen["required 1.2"] = self.env.timeout_ms

        @tck_test()
        def test_optional_spec110_probe(self) -> None:
            seen["optional 1.10"] = self.env.timeout_ms

        @tck_test()
        def test_optional_spec111_probe(self) -> None:
            seen["optional 1.11"] = self.env.timeout_ms

    Probe().test_required_spec102_probe()
    Probe().test_optional_spec110_probe()
    Probe().test_optional_spec111_probe()
    assert seen == {"required 1.2": 700, "optional 1.10": 20, "optional 1.11": 300}


CLI_MODULE = """
from rstreams.tck import SyncRangePublisher, IdentityProcessor, SyncSubscriber
def good(n): return SyncRangePublisher(0, n)
def bad(n):
    class P:
        def subscribe(self, s):
            SyncRangePublisher(0, n).subscribe(s)
            s.on_complete()
    return P()
"""


def test_cli_prints_a_rule_table_and_exit_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tck_cli_demo.py").write_text(CLI_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    fast = ["--timeout-ms", "200", "--no-signals-timeout-ms", "20"]
    assert main(["tck_cli_demo:good", "--kind", "publisher", "-k", "spec30", *fast]) == 0
    out = capsys.readouterr().out
    assert "3.9" in out and "passed" in out and "test_required_spec309_request_zero_must_signal_value_error" in out
    assert main(["tck_cli_demo:bad", "--kind", "publisher", "-k", "spec107", *fast]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "Rule 1.7" in out
    assert main(["tck_cli_demo:nope", "--kind", "publisher"]) == 2
    assert main(["no_colon", "--kind", "publisher"]) == 2


def test_python_m_entry_point(tmp_path: Path) -> None:
    (tmp_path / "tck_cli_demo2.py").write_text(CLI_MODULE)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "rstreams.tck", "tck_cli_demo2:good", "--kind", "publisher", "-k", "spec309_request_zero"],
        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


README_EXAMPLE = '''
from rstreams.tck import PublisherVerification, SyncRangePublisher as MyRange

class TestMyRange(PublisherVerification):
    def create_publisher(self, n): return MyRange(0, n)
    def create_failed_publisher(self): return None
'''


def test_readme_example_under_pytest(tmp_path: Path) -> None:
    """The five-line README example is collected by pytest; optional/untested/skip outcomes are visible."""
    (tmp_path / "test_readme_example.py").write_text(textwrap.dedent(README_EXAMPLE))
    env = dict(os.environ, RSTREAMS_TCK_NO_SIGNALS_TIMEOUT_MS="20")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", "-k", "spec309 or spec104 or spec304",
         str(tmp_path / "test_readme_example.py")],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 passed" in proc.stdout, proc.stdout
    assert "create_failed_publisher() returned None" in proc.stdout
    assert "untested: rule 3.4" in proc.stdout


def test_receive_buffer_overflow_is_a_rule_1_1_violation() -> None:
    from rstreams.tck._env import RECEIVE_BUFFER_SIZE, Receptacle

    env = TestEnvironment(timeout_ms=50, no_signals_timeout_ms=10)
    r = Receptacle(env)
    for i in range(RECEIVE_BUFFER_SIZE):
        r.add(("next", i))
    assert env.violations == []
    r.add(("next", RECEIVE_BUFFER_SIZE))
    assert len(env.violations) == 1 and "Rule 1.1" in env.violations[0] and "receive buffer" in env.violations[0]


def test_a_hanging_implementation_is_reported_not_hung() -> None:
    import threading

    from tck_helpers import verification

    from rstreams.tck import run_test

    release = threading.Event()

    class Hangs:
        def subscribe(self, s: object) -> None:
            release.wait(30)

    cls = verification("publisher", lambda n: Hangs())
    try:
        result = run_test(cls, "test_required_spec109_must_issue_on_subscribe_for_non_none_subscriber", hang_timeout=0.5)
    finally:
        release.set()
    assert result.outcome == "ERROR" and "did not finish" in result.message
