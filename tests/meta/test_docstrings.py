"""The README's promise about the Flowable docstrings holds: every public method has an example, a
"Backpressure:" line and a "Scheduler:" line (RxJava documents both for every operator)."""

from __future__ import annotations

import inspect
import os
import re

import pytest

from rstreams import Flowable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _public_methods() -> dict[str, str]:
    methods: dict[str, str] = {}
    for name in dir(Flowable):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(Flowable, name)
        fn = attr.__func__ if isinstance(attr, (staticmethod, classmethod)) else attr
        if callable(fn):
            methods[name] = inspect.getdoc(fn) or ""
    return methods


METHODS = _public_methods()


def _example(doc: str) -> str:
    """The code block after ``Example::`` (its indented lines), or ''."""
    m = re.search(r"^Example::\n\n((?:(?:    .*)?\n)+)", doc + "\n", re.M)
    return m.group(1).strip() if m else ""


def test_the_facade_has_the_methods_the_readme_lists() -> None:
    assert len(METHODS) >= 128
    for name in ("map", "flat_map", "subscribe", "zip", "interval", "map_async", "blocking_first"):
        assert name in METHODS


def test_every_public_method_has_an_example() -> None:
    missing = sorted(n for n, d in METHODS.items() if not _example(d))
    assert not missing, f"{len(missing)} of {len(METHODS)} public Flowable methods have no Example:: block: {missing}"


def test_every_public_method_has_a_backpressure_line() -> None:
    missing = sorted(n for n, d in METHODS.items() if not re.search(r"^Backpressure: \S", d, re.M))
    assert not missing, f"{len(missing)} of {len(METHODS)} public Flowable methods have no 'Backpressure:' line: {missing}"


def test_every_public_method_has_a_scheduler_line() -> None:
    missing = sorted(n for n, d in METHODS.items() if not re.search(r"^Scheduler: \S", d, re.M))
    assert not missing, f"{len(missing)} of {len(METHODS)} public Flowable methods have no 'Scheduler:' line: {missing}"


@pytest.mark.parametrize("name", sorted(n for n, d in METHODS.items() if "scheduler" in inspect.signature(getattr(Flowable, n)).parameters))
def test_a_method_taking_a_scheduler_says_its_default(name: str) -> None:
    doc = METHODS[name]
    scheduler_line = doc[doc.index("Scheduler:"):]
    assert "scheduler" in scheduler_line or "worker" in scheduler_line, f"{name}: the Scheduler line does not say which"


def test_the_readme_states_the_promise() -> None:
    with open(os.path.join(ROOT, "README.md")) as f:
        text = " ".join(f.read().split())
    assert 'Every method\'s docstring has an example and its "Backpressure:" and "Scheduler:" behaviour' in text
