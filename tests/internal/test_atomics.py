"""Unit tests of the lock-backed atomics (single-threaded semantics; races are in test_races.py)."""

from __future__ import annotations

from rstreams._internal.atomics import AtomicFlag, AtomicInt, AtomicRef


def test_atomic_int_read_modify_write_ops_return_the_documented_value() -> None:
    a = AtomicInt()
    assert a.get() == 0
    a.set(5)
    assert a.get() == 5
    assert a.get_and_set(7) == 5 and a.get() == 7
    assert a.get_and_add(3) == 7 and a.get() == 10
    assert a.add_and_get(-4) == 6
    assert a.get_and_increment() == 6 and a.get() == 7
    assert a.increment_and_get() == 8
    assert a.decrement_and_get() == 7
    assert repr(a) == "AtomicInt(7)"


def test_atomic_int_never_overflows() -> None:
    a = AtomicInt(2**63 - 1)
    assert a.increment_and_get() == 2**63


def test_atomic_int_compare_and_set_only_on_match() -> None:
    a = AtomicInt(1)
    assert not a.compare_and_set(0, 9)
    assert a.get() == 1
    assert a.compare_and_set(1, 9)
    assert a.get() == 9


def test_atomic_ref_compare_and_set_uses_identity_not_equality() -> None:
    first = [1]
    equal_copy = [1]
    r: AtomicRef[list[int] | None] = AtomicRef(first)
    assert not r.compare_and_set(equal_copy, None)
    assert r.get() is first
    assert r.compare_and_set(first, equal_copy)
    assert r.get() is equal_copy
    assert r.get_and_set(None) is equal_copy
    assert r.get() is None
    r.set(first)
    assert repr(r) == "AtomicRef([1])"


def test_atomic_flag_is_raised_once() -> None:
    f = AtomicFlag()
    assert not f and not f.is_set()
    assert f.try_set() is True
    assert f.try_set() is False
    assert f and f.is_set()
    assert repr(f) == "AtomicFlag(True)"
