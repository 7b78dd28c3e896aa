"""Capped request accounting: 2**63-1 is sticky, never wraps, never negative; rule 3.9 validation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams._internal import plugins
from rstreams._internal.atomics import AtomicInt
from rstreams._internal.requests import (
    MAX_DEMAND,
    add_cap,
    add_request,
    mul_cap,
    produced,
    sub_cap,
    validate_request,
)
from rstreams.errors import BadRequestError, ProtocolViolationError

MAX = 2**63 - 1


def test_max_demand_is_long_max() -> None:
    assert MAX_DEMAND == MAX


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (0, 0, 0),
        (1, 2, 3),
        (MAX - 1, 1, MAX),
        (MAX, 1, MAX),
        (2**62, 2**62, MAX),
        (MAX, MAX, MAX),
        (2**70, 5, MAX),
    ],
)
def test_add_cap(a: int, b: int, expected: int) -> None:
    assert add_cap(a, b) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"), [(3, 4, 12), (0, MAX, 0), (2**32, 2**32, MAX), (MAX, 2, MAX)]
)
def test_mul_cap(a: int, b: int, expected: int) -> None:
    assert mul_cap(a, b) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"), [(5, 3, 2), (3, 5, 0), (MAX, 10, MAX), (MAX, MAX, MAX), (0, 1, 0)]
)
def test_sub_cap(a: int, b: int, expected: int) -> None:
    assert sub_cap(a, b) == expected


@pytest.mark.parametrize("n", [1, 7, MAX, 2**63, 2**64, 2**70])
def test_validate_request_accepts_positive_ints(n: int) -> None:
    assert validate_request(n) is None


@pytest.mark.parametrize("n", [0, -1, -(2**64), True, False, 1.5, 3.0, None, "3", [1], object()])
def test_validate_request_refuses_bad_amounts_naming_rule_3_9(n: object) -> None:
    err = validate_request(n)
    assert isinstance(err, BadRequestError)
    assert isinstance(err, ValueError)
    assert "3.9" in str(err)


def test_add_request_returns_previous_and_caps_sticky() -> None:
    r = AtomicInt()
    assert add_request(r, 5) == 0
    assert add_request(r, 6) == 5
    assert r.get() == 11
    assert add_request(r, MAX) == 11
    assert r.get() == MAX
    assert add_request(r, 1) == MAX
    assert r.get() == MAX
    r2 = AtomicInt()
    add_request(r2, 2**70)  # above the cap means unbounded, stored capped
    assert r2.get() == MAX


def test_produced_subtracts_and_is_sticky_when_unbounded() -> None:
    r = AtomicInt(10)
    assert produced(r, 4) == 6
    assert produced(r, 6) == 0
    u = AtomicInt(MAX)
    assert produced(u, 1000) == MAX
    assert u.get() == MAX


def test_produced_more_than_requested_reports_rule_1_1_and_floors_at_zero() -> None:
    r = AtomicInt(2)
    with plugins.collect_errors() as errors:
        assert produced(r, 5) == 0
    assert r.get() == 0
    assert len(errors) == 1
    assert isinstance(errors[0], ProtocolViolationError)
    assert errors[0].rule == "1.1"


_amount = st.one_of(st.integers(min_value=1, max_value=20), st.integers(min_value=1, max_value=2**64))
_ops = st.lists(st.tuples(st.sampled_from(["add", "produce"]), _amount), max_size=40)


@settings(max_examples=200, deadline=None)
@given(_ops)
def test_property_accounting_never_wraps_never_negative_and_max_is_sticky(ops: list[tuple[str, int]]) -> None:
    r = AtomicInt()
    model = 0
    violations = 0
    with plugins.collect_errors() as errors:
        for op, n in ops:
            before = r.get()
            if op == "add":
                prev = add_request(r, n)
                assert prev == before
                model = MAX if model == MAX else min(MAX, model + n)
            else:
                result = produced(r, n)
                if model != MAX:
                    if n > model:
                        violations += 1
                    model = max(0, model - n)
                assert result == model
            value = r.get()
            assert 0 <= value <= MAX
            assert value == model
            if before == MAX:
                assert value == MAX  # sticky
    assert len(errors) == violations
    assert all(isinstance(e, ProtocolViolationError) and e.rule == "1.1" for e in errors)


@given(st.integers(min_value=0, max_value=2**66), st.integers(min_value=0, max_value=2**66))
def test_property_cap_helpers_stay_in_range(a: int, b: int) -> None:
    for v in (add_cap(a, b), mul_cap(a, b), sub_cap(a, b)):
        assert 0 <= v <= MAX
    assert add_cap(a, b) == min(MAX, a + b)
    assert mul_cap(a, b) == min(MAX, a * b)
