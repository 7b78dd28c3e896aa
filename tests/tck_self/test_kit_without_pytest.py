"""The kit imports and runs without pytest (a plain ``pip install rstreams`` has no pytest).

Each check runs in a subprocess where ``import pytest`` fails (``sys.modules['pytest'] = None``), so
the kit must fall back on its own outcome exceptions; the runner classifies them as it does pytest's.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run_without_pytest(code: str) -> subprocess.CompletedProcess[str]:
    prelude = "import sys\nsys.modules['pytest'] = None  # import pytest -> ImportError\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_import_rstreams_tck_without_pytest() -> None:
    proc = _run_without_pytest(
        """
        import rstreams.tck as tck
        from rstreams.tck import PublisherVerification, SubscriberWhiteboxVerification
        from rstreams.tck import IdentityProcessorVerification, SubscriberBlackboxVerification
        from rstreams.tck._outcomes import SkipOutcome, XFailOutcome, FailOutcome
        assert 'pytest' not in [m for m, v in sys.modules.items() if v is not None], 'pytest got imported'
        print(SkipOutcome.__module__, XFailOutcome.__name__, FailOutcome.__name__)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("rstreams.tck._outcomes _KitXFail _KitFail")


def test_run_verification_without_pytest_classifies_every_outcome() -> None:
    # a pass, an untested rule, a config-gated skip, an optional rule the range does not implement (xfail)
    proc = _run_without_pytest(
        """
        from rstreams import Flowable
        from rstreams.tck import PublisherVerification, run_verification

        class V(PublisherVerification):
            __test__ = False
            def create_publisher(self, n): return Flowable.from_iterable(range(n))
            def create_failed_publisher(self): return None

        names = ('spec309', 'untested_spec106', 'optional_spec104', 'py_spec110')
        outcomes = {}
        for sel in names:
            for r in run_verification(V, select=sel):
                outcomes[sel] = r.outcome
        print(sorted(outcomes.items()))
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert "('spec309', 'passed')" in proc.stdout
    assert "('untested_spec106', 'untested')" in proc.stdout
    assert "('optional_spec104', 'skipped')" in proc.stdout
    assert "('py_spec110', 'xfail-optional')" in proc.stdout


def test_cli_without_pytest() -> None:
    proc = _run_without_pytest(
        """
        from rstreams.tck._cli import main
        import rstreams.testing  # the CLI's publisher kind needs nothing from pytest either
        sys.modules['_ci_factory'] = type(sys)('_ci_factory')
        from rstreams import Flowable
        sys.modules['_ci_factory'].make = lambda n: Flowable.from_iterable(range(n))
        status = main(['_ci_factory:make', '--kind', 'publisher', '-k', 'spec3'])
        assert status == 0, status
        assert main(['--help']) == 0
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert "passed" in proc.stdout
