"""Where tests live: the rule-level tests (``test_rule_X_Y_*``) are under tests/spec/, in modules named
after what they test (``tests/spec/test_rules_<topic>.py``), so that the Reactive Streams rules a
change may break are found in one place."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
SPEC = TESTS / "spec"


def _rule_tests(path: Path) -> list[str]:
    """The names of the ``test_rule_*`` functions and methods defined in ``path`` (at any depth)."""
    text = path.read_text(encoding="utf-8")
    if "test_rule_" not in text:
        return []  # most modules: no parse needed
    tree = ast.parse(text, filename=str(path))
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_rule_")
    ]


def _outside_spec() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("*.py")):
        if SPEC in path.parents:
            continue
        names = _rule_tests(path)
        if names:
            found[path.relative_to(TESTS).as_posix()] = names
    return found


def test_every_rule_level_test_lives_under_tests_spec() -> None:
    stray = _outside_spec()
    assert not stray, (
        "rule-level tests (test_rule_*) belong under tests/spec/, in a module named after what they test "
        "(tests/spec/test_rules_<topic>.py; import shared helpers from the original module or tests/spec/_helpers.py): "
        + "; ".join(f"tests/{rel}: {', '.join(names)}" for rel, names in stray.items())
    )

