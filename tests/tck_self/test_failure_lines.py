"""The kit's failure lines carry the whole rule, and the Python-only rule 2.13 check says how to comply."""

from __future__ import annotations

from typing import Any

import pytest
from tck_broken import LEAK, BrokenRange, FailedPublisher
from tck_helpers import require_failure, verification

from rstreams import RULES
from rstreams._spec import violation
from rstreams.tck._runner import format_table

PY_213 = "test_required_py_spec213_must_consider_subscription_cancelled_and_report_error_if_on_next_raises"


def _squash(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("rule", sorted(RULES))
def test_violation_message_holds_the_whole_rule_text(rule: str) -> None:
    message = violation(rule, "what happened")
    assert message.startswith(f"Rule {rule} violated: what happened")
    assert RULES[rule] in message
    assert "..." not in message


def _broken(*flags: str) -> Any:
    return verification("publisher", lambda n: BrokenRange(n, *flags), failed=lambda: FailedPublisher())


@pytest.mark.parametrize("flag", ["propagate_errors", "swallow_errors", "ignore_errors"])
def test_py_spec213_failure_says_how_to_comply(flag: str) -> None:
    try:
        result = require_failure(_broken(flag), PY_213, "Rule 2.13", RULES["2.13"])
    finally:
        LEAK.clear()
    assert "rstreams.plugins.on_error" in result.message
    assert "logging" in result.message
    assert "cancel" in result.message


def test_cli_table_prints_the_whole_rule_and_the_fix() -> None:
    try:
        result = require_failure(_broken("swallow_errors"), PY_213, "Rule 2.13")
    finally:
        LEAK.clear()
    table = format_table([result])
    assert RULES["2.13"] in _squash(table)
    assert "rstreams.plugins.on_error" in table
    # wrapped to the table's width, never cut
    assert all(len(line) <= 100 for line in table.splitlines() if not line.startswith("2.13 "))
