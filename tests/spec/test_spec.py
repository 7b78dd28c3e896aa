"""The rule table, the protocols and the rule-naming message helpers."""

from __future__ import annotations

import pytest

from rstreams import MAX_DEMAND, RULES, Processor, Publisher, Subscriber, Subscription, rule_text
from rstreams._spec import bad_request_message, null_element_message, violation
from rstreams.errors import BadRequestError, NoneElementError, ProtocolViolationError

EXPECTED_IDS = (
    [f"1.{i}" for i in range(1, 12)]
    + [f"2.{i}" for i in range(1, 14)]
    + [f"3.{i}" for i in range(1, 18)]
    + ["4.1", "4.2"]
)


def test_rule_table_has_every_rule_from_1_1_to_4_2() -> None:
    assert list(RULES) == EXPECTED_IDS
    assert all(len(text) > 30 for text in RULES.values())


def test_rule_text_unknown_rule_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="1.1 to 4.2"):
        rule_text("9.9")


def test_max_demand_is_long_max() -> None:
    assert MAX_DEMAND == 2**63 - 1


class _Pub:
    def subscribe(self, subscriber: object) -> None:
        pass


class _Sub:
    def on_subscribe(self, s: object) -> None: ...
    def on_next(self, x: object) -> None: ...
    def on_error(self, e: BaseException) -> None: ...
    def on_complete(self) -> None: ...


class _Subscription:
    def request(self, n: int) -> None: ...
    def cancel(self) -> None: ...


class _Proc(_Sub, _Pub):
    pass


def test_protocols_are_runtime_checkable_structurally() -> None:
    assert isinstance(_Pub(), Publisher)
    assert isinstance(_Sub(), Subscriber)
    assert isinstance(_Subscription(), Subscription)
    assert isinstance(_Proc(), Processor)
    assert not isinstance(_Pub(), Subscriber)
    assert not isinstance(object(), Publisher)


def test_flowable_is_a_publisher() -> None:
    from rstreams import Flowable

    assert isinstance(Flowable.just(1), Publisher)


def test_rule_3_9_bad_request_message_names_the_rule() -> None:
    for n in (0, -1, True, 1.5, None, "3"):
        msg = bad_request_message(n)
        assert "3.9" in msg
    assert "non-positive subscription request" in bad_request_message(0)


def test_rule_2_13_none_message_names_the_rule() -> None:
    assert "2.13" in null_element_message("on_next")
    assert "1.9" in null_element_message("subscribe", "1.9")


def test_violation_message_names_rule_and_detail() -> None:
    msg = violation("1.1", "3 items for a demand of 2")
    assert msg.startswith("Rule 1.1 violated: 3 items for a demand of 2")


def test_error_types_map_the_jvm_exceptions() -> None:
    assert issubclass(NoneElementError, TypeError)
    assert issubclass(BadRequestError, ValueError)
    assert issubclass(ProtocolViolationError, RuntimeError)
    e = ProtocolViolationError("2.12", "twice")
    assert e.rule == "2.12" and "2.12" in str(e)
