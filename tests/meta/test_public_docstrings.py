"""Every public function and class of the library (the names in each public module's ``__all__``)
has a small example in its docstring, as the Flowable methods do (tests/meta/test_docstrings.py);
a function that builds a publisher says how it treats backpressure.

Exempt by rule: exception classes (their docstring says when they are raised; an example would only
show a ``raise``) and typing-only aliases (``Literal``/``Union`` aliases and the like are neither
functions nor classes at run time, so they are never collected). Anything else exempt is listed in
EXEMPT with its reason.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
from typing import Any

MODULES = [
    "rstreams",
    "rstreams.plugins",
    "rstreams.metrics",
    "rstreams.debug",
    "rstreams.testing",
    "rstreams.retry",
    "rstreams.schedulers",
    "rstreams.processors",
    "rstreams.tck",
    "rstreams.aio",
]
if importlib.util.find_spec("pyspark") is not None:
    # rstreams.spark imports pyspark lazily (inside its functions), so importing it is cheap;
    # its examples only make sense where pyspark is installed.
    MODULES.append("rstreams.spark")

# Names exempt beyond the rules above, each with its reason. Keep it empty if you can: an entry
# whose docstring gains an example fails test_the_exemptions_are_still_needed, so remove it then.
EXEMPT: dict[str, str] = {
    "rstreams.GroupedFlowable": "example not written yet (defined in src/rstreams/flowable/operators/_group_by.py)",
}


def _public_objects() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for modname in MODULES:
        module = importlib.import_module(modname)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            qualified = f"{modname}.{name}"
            if qualified in EXEMPT:
                continue
            if inspect.isclass(obj):
                if issubclass(obj, BaseException):
                    continue
            elif not inspect.isfunction(obj) and not inspect.isbuiltin(obj):
                continue  # modules, constants, typing-only aliases
            found[qualified] = obj
    return found


OBJECTS = _public_objects()


def _example(doc: str) -> str:
    """The code block after ``Example::`` (its indented lines), or ''. The same pattern as
    tests/meta/test_docstrings.py."""
    m = re.search(r"^Example::\n\n((?:(?:    .*)?\n)+)", doc + "\n", re.M)
    return m.group(1).strip() if m else ""


def _has_example(doc: str) -> bool:
    return bool(_example(doc)) or bool(re.search(r"^\s*>>> \S", doc, re.M))


def _without_callables(annotation: str) -> str:
    """``annotation`` with every ``Callable[...]`` cut out: a function returning a hook that takes
    and returns Flowables does not itself return a publisher."""
    while (start := annotation.find("Callable[")) >= 0:
        depth, end = 0, start + len("Callable")
        for end in range(start + len("Callable"), len(annotation)):
            depth += {"[": 1, "]": -1}.get(annotation[end], 0)
            if depth == 0:
                break
        annotation = annotation[:start] + annotation[end + 1 :]
    return annotation


def _returns_a_publisher(obj: Any) -> bool:
    """The return annotation names a Flowable, Publisher or Processor type (``ConnectableFlowable``
    and ``PublishProcessor`` count; ``FlowableAsyncIterator`` does not)."""
    if not inspect.isfunction(obj):
        return False
    annotation = inspect.unwrap(obj).__annotations__.get("return")
    if annotation is None:
        return False
    text = _without_callables(annotation if isinstance(annotation, str) else repr(annotation))
    return re.search(r"(Flowable|Publisher|Processor)\b", text) is not None


def test_the_modules_have_public_names() -> None:
    assert len(OBJECTS) >= 80
    for name in (
        "rstreams.plugins.reset",
        "rstreams.metrics.MetricsRegistry",
        "rstreams.aio.map_async",
        "rstreams.processors.PublishProcessor",
        "rstreams.testing.TestScheduler",
    ):
        assert name in OBJECTS


def test_every_public_function_and_class_has_an_example() -> None:
    missing = sorted(n for n, o in OBJECTS.items() if not _has_example(inspect.getdoc(o) or ""))
    assert not missing, (
        f"{len(missing)} of {len(OBJECTS)} public names have no Example:: block or doctest: {missing}"
    )


def test_every_public_function_returning_a_publisher_has_a_backpressure_line() -> None:
    builders = {n: o for n, o in OBJECTS.items() if _returns_a_publisher(o)}
    assert builders, "no public function returning a Flowable/Publisher/Processor was found"
    missing = sorted(
        n for n, o in builders.items() if not re.search(r"^Backpressure: \S", inspect.getdoc(o) or "", re.M)
    )
    assert not missing, (
        f"{len(missing)} of {len(builders)} publisher-returning functions have no 'Backpressure:' line: {missing}"
    )


def test_the_exemptions_name_public_objects() -> None:
    for qualified, reason in EXEMPT.items():
        modname, _, name = qualified.rpartition(".")
        assert name in importlib.import_module(modname).__all__, qualified
        assert reason.strip(), qualified


def test_the_exemptions_are_still_needed() -> None:
    stale = []
    for qualified in EXEMPT:
        modname, _, name = qualified.rpartition(".")
        if _has_example(inspect.getdoc(getattr(importlib.import_module(modname), name)) or ""):
            stale.append(qualified)
    assert not stale, f"these names have an example now: remove them from EXEMPT: {stale}"
