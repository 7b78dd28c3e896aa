"""The shared argument checks added for sizes, named callables and flags: one wording per mistake."""

from __future__ import annotations

import pytest

from rstreams._internal.arguments import check_bool, check_callable_arg, positive_int_or_none


def test_positive_int_or_none_passes_none_and_sizes() -> None:
    assert positive_int_or_none("from_arrow", "batch_size", None) is None
    assert positive_int_or_none("from_arrow", "batch_size", 1) == 1
    assert positive_int_or_none("from_arrow", "batch_size", 2**70) == 2**70


@pytest.mark.parametrize("bad", [0, -3])
def test_positive_int_or_none_out_of_range_is_a_value_error(bad: int) -> None:
    with pytest.raises(ValueError, match=rf"^from_arrow\(\): batch_size must be >= 1, got {bad}$"):
        positive_int_or_none("from_arrow", "batch_size", bad)


@pytest.mark.parametrize("bad", [True, 1.5, "3"])
def test_positive_int_or_none_wrong_type_is_a_type_error(bad: object) -> None:
    with pytest.raises(TypeError, match=r"^from_observable\(\): capacity must be a positive int or None, got "):
        positive_int_or_none("from_observable", "capacity", bad)


def test_check_callable_arg() -> None:
    check_callable_arg("generate", "state_fn", lambda: 0)
    check_callable_arg("generate", "dispose_fn", None, none_ok=True)
    with pytest.raises(TypeError, match=r"^generate\(\): state_fn must be callable, got NoneType$"):
        check_callable_arg("generate", "state_fn", None)
    with pytest.raises(TypeError, match=r"^generate\(\): dispose_fn must be callable or None, got int$"):
        check_callable_arg("generate", "dispose_fn", 3, none_ok=True)


def test_check_bool() -> None:
    assert check_bool("merge", "delay_error", True) is True
    assert check_bool("merge", "delay_error", False) is False
    for bad in (1, 0, None, "yes"):
        with pytest.raises(TypeError, match=r"^merge\(\): delay_error must be a bool, got "):
            check_bool("merge", "delay_error", bad)
