"""``rstreams tck MODULE:FACTORY --kind publisher|whitebox|blackbox|processor``: run the kit, print a table.

FACTORY is a plain callable:

* ``--kind publisher``: ``f(n) -> Publisher`` emitting exactly ``n`` elements then completing;
* ``--kind whitebox``: ``f(probe) -> Subscriber`` wired to the :class:`WhiteboxSubscriberProbe`;
* ``--kind blackbox``: ``f() -> Subscriber``;
* ``--kind processor``: ``f(buffer_size) -> Processor``.

The exit status is 1 if any required (or stochastic) test failed, 2 for a usage error, else 0.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

from .._spec import MAX_DEMAND
from ._base import VerificationBase
from ._runner import format_table, has_required_failures, run_verification

__all__ = ["main", "build_verification", "load_factory"]

KINDS = ("publisher", "whitebox", "blackbox", "processor")


def load_factory(spec: str) -> Callable[..., Any]:
    """Import ``"package.module:attr.path"`` and return the callable it names."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"expected MODULE:FACTORY, got {spec!r}")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"{spec} is not callable")
    return obj  # type: ignore[no-any-return]


def build_verification(
    kind: str,
    factory: Callable[..., Any],
    *,
    max_elements: int | None = None,
    failed: Callable[[], Any] | None = None,
    timeout_ms: int | None = None,
    no_signals_timeout_ms: int | None = None,
    skip_stochastic: bool = False,
    coordinated_emission: bool = False,
) -> type[VerificationBase]:
    """Make a verification class for ``factory`` (what the CLI runs)."""
    from ._processor import IdentityProcessorVerification
    from ._publisher import PublisherVerification
    from ._subscriber import SubscriberBlackboxVerification, SubscriberWhiteboxVerification

    limit = MAX_DEMAND - 1 if max_elements is None else max_elements
    attrs: dict[str, Any] = {
        "__test__": False,
        "default_timeout_ms": timeout_ms,
        "no_signals_timeout_ms": no_signals_timeout_ms,
    }
    base: type[VerificationBase]
    if kind == "publisher":
        base = PublisherVerification
        attrs["create_publisher"] = lambda self, n: factory(n)
        attrs["create_failed_publisher"] = lambda self: failed() if failed is not None else None
        attrs["max_elements_from_publisher"] = lambda self: limit
        attrs["skip_stochastic_tests"] = lambda self: skip_stochastic
    elif kind == "whitebox":
        base = SubscriberWhiteboxVerification
        attrs["create_subscriber"] = lambda self, probe: factory(probe)
    elif kind == "blackbox":
        base = SubscriberBlackboxVerification
        attrs["create_subscriber"] = lambda self: factory()
    elif kind == "processor":
        base = IdentityProcessorVerification
        attrs["create_identity_processor"] = lambda self, size: factory(size)
        attrs["does_coordinated_emission"] = lambda self: coordinated_emission
        attrs["create_failed_publisher"] = lambda self: failed() if failed is not None else None
        attrs["max_elements_from_publisher"] = lambda self: limit
        attrs["skip_stochastic_tests"] = lambda self: skip_stochastic
    else:
        raise ValueError(f"--kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return type(f"Cli{kind.title()}Verification", (base,), attrs)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rstreams tck",
        description="Run the rstreams Reactive Streams TCK against a factory and print a rule-by-rule table.",
    )
    p.add_argument("target", help="MODULE:FACTORY, a callable building the object under test")
    p.add_argument("--kind", choices=KINDS, required=True, help="what the factory builds")
    p.add_argument("--max-elements", type=int, default=None, help="max elements the publisher can emit")
    p.add_argument("--failed", default=None, metavar="MODULE:FACTORY", help="f() -> a publisher that fails")
    p.add_argument("--timeout-ms", type=int, default=None, help="expected-signal timeout (default 200)")
    p.add_argument("--no-signals-timeout-ms", type=int, default=None, help="no-signal wait (default 100)")
    p.add_argument("--skip-stochastic", action="store_true", help="skip the stochastic rule 1.3 test")
    p.add_argument(
        "--coordinated-emission",
        action="store_true",
        help="processor: it emits only when every Subscriber has demand",
    )
    p.add_argument("-k", dest="select", default=None, help="only tests whose name contains this text")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``rstreams tck ...`` and ``python -m rstreams.tck ...``; returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    try:
        factory = load_factory(args.target)
        failed = load_factory(args.failed) if args.failed else None
    except (ImportError, AttributeError, ValueError, TypeError) as exc:
        print(f"rstreams tck: cannot load the factory: {exc}", file=sys.stderr)
        return 2
    verification = build_verification(
        args.kind,
        factory,
        max_elements=args.max_elements,
        failed=failed,
        timeout_ms=args.timeout_ms,
        no_signals_timeout_ms=args.no_signals_timeout_ms,
        skip_stochastic=args.skip_stochastic,
        coordinated_emission=args.coordinated_emission,
    )
    results = run_verification(verification, select=args.select)
    print(f"rstreams tck: {args.kind} verification of {args.target}")
    print(format_table(results))
    if not results:
        print("rstreams tck: no test selected", file=sys.stderr)
        return 2
    return 1 if has_required_failures(results) else 0
