"""The undeliverable-error hook: logging default, replaceable handler, collect_errors."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from rstreams import plugins as public_plugins
from rstreams._internal import plugins
from rstreams.errors import UndeliverableError


@pytest.fixture(autouse=True)
def _restore_handler() -> Iterator[None]:
    previous = plugins.get_error_handler()
    yield
    plugins.set_error_handler(previous)


def test_public_module_reexports_the_internal_hook() -> None:
    assert public_plugins.on_error is plugins.on_error
    assert public_plugins.collect_errors is plugins.collect_errors


def test_default_handler_logs_at_error_with_traceback_on_rstreams_logger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    plugins.set_error_handler(None)
    assert plugins.get_error_handler() is None
    try:
        raise KeyError("boom")
    except KeyError as e:
        err = e
    with caplog.at_level(logging.ERROR, logger="rstreams"):
        plugins.on_error(err, "after cancel")
    records = [r for r in caplog.records if r.name == "rstreams"]
    assert len(records) == 1
    rec = records[0]
    assert rec.levelno == logging.ERROR
    assert rec.exc_info is not None
    wrapped = rec.exc_info[1]
    assert isinstance(wrapped, UndeliverableError)
    assert wrapped.cause is err and wrapped.__cause__ is err
    assert "after cancel" in rec.getMessage() and "KeyError" in rec.getMessage()
    # the traceback of the original error is rendered in the log text
    assert "Traceback" in caplog.text and "raise KeyError" in caplog.text


def test_handler_is_replaceable_and_receives_the_wrapper() -> None:
    seen: list[BaseException] = []
    plugins.set_error_handler(seen.append)
    assert plugins.get_error_handler() == seen.append
    err = ValueError("x")
    plugins.on_error(err)
    assert len(seen) == 1 and isinstance(seen[0], UndeliverableError) and seen[0].cause is err
    # an UndeliverableError is passed through, not wrapped twice
    already = UndeliverableError(err, "ctx")
    plugins.on_error(already)
    assert seen[1] is already


def test_set_error_handler_none_restores_logging(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[BaseException] = []
    plugins.set_error_handler(seen.append)
    plugins.set_error_handler(None)
    with caplog.at_level(logging.ERROR, logger="rstreams"):
        plugins.on_error(RuntimeError("r"))
    assert not seen
    assert any(r.name == "rstreams" and r.levelno == logging.ERROR for r in caplog.records)


def test_collect_errors_unwraps_and_restores_previous_handler() -> None:
    outer: list[BaseException] = []
    plugins.set_error_handler(outer.append)
    a, b = ValueError("a"), KeyboardInterrupt()
    with plugins.collect_errors() as errors:
        plugins.on_error(a)
        plugins.on_error(UndeliverableError(b))
    assert errors == [a, b]
    assert plugins.get_error_handler() == outer.append
    assert not outer


def test_raising_handler_falls_back_to_logging(caplog: pytest.LogCaptureFixture) -> None:
    def bad_handler(error: BaseException) -> None:
        raise RuntimeError("handler broke")

    plugins.set_error_handler(bad_handler)
    err = ValueError("original")
    with caplog.at_level(logging.ERROR, logger="rstreams"):
        plugins.on_error(err)  # must not raise
    records = [r for r in caplog.records if r.name == "rstreams" and r.levelno == logging.ERROR]
    causes = [r.exc_info[1].cause for r in records if r.exc_info]
    assert err in causes
    assert any(isinstance(c, RuntimeError) and str(c) == "handler broke" for c in causes)
