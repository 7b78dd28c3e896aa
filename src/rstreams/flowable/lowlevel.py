"""The names the flowable layer lends to the packages built on it.

``rstreams.aio``, ``rstreams.retry``, ``rstreams.processors``, ``rstreams.plugins`` and
``rstreams.spark`` sit above the flowable layer and import from it only its public modules:
``rstreams.flowable`` (``Flowable`` and the types users see) and this one. A name is here because
one of those packages needs it (``tests/meta/test_layers.py`` checks that each is still used):

* the asyncio bridge, which Flowable's own methods use (``async for``, ``await``, ``map_async``,
  ``from_async_iterable``) and :mod:`rstreams.aio` re-exports under the same names;
* the retry policies, which are ``retry_when`` handlers and which :mod:`rstreams.retry` re-exports;
* the processors, which are Flowables the multicast operators are built of and which
  :mod:`rstreams.processors` re-exports;
* the switches of assembly tracing and of the assembly hook (they patch the ``Flowable`` class),
  which :mod:`rstreams.plugins` turns;
* building blocks for Flowables written outside this package (the Spark sources and the
  per-partition runner): the base subscriber of one-upstream operators, the sync-fusion chain and
  its batch helpers, the Arrow record-batch conversions.

The building blocks are not user API: their signatures follow the operators' needs. Each name is
loaded on first use (the asyncio bridge imports asyncio), as in ``rstreams.flowable``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._arrow import batch_to_rows, check_nulls, rows_to_batch
    from ._assembly import assembly_hook, set_assembly_hook, set_tracing, tracing_enabled
    from ._base import BasicSubscriber
    from ._fused import Fusion, batch_sink, none_index
    from ._processors._async import AsyncProcessor
    from ._processors._base import FlowableProcessor, SerializedProcessor
    from ._processors._behavior import BehaviorProcessor
    from ._processors._multicast import MulticastProcessor
    from ._processors._publish import PublishProcessor
    from ._processors._replay import ReplayProcessor
    from ._processors._unicast import UnicastProcessor
    from ._retry_policy import Retry, RetryExhaustedError, RetrySignal, RetrySpec
    from .operators._async_iterator import (
        AsyncIteratorSubscriber,
        FlowableAsyncIterator,
        await_last,
        to_async_iterator,
    )
    from .operators._map_async import do_on_next_async, flat_map_async, map_async
    from .sources._async import from_async_iterable, from_coroutine

__all__ = [
    "AsyncIteratorSubscriber",
    "AsyncProcessor",
    "BasicSubscriber",
    "BehaviorProcessor",
    "FlowableAsyncIterator",
    "FlowableProcessor",
    "Fusion",
    "MulticastProcessor",
    "PublishProcessor",
    "ReplayProcessor",
    "Retry",
    "RetryExhaustedError",
    "RetrySignal",
    "RetrySpec",
    "SerializedProcessor",
    "UnicastProcessor",
    "assembly_hook",
    "await_last",
    "batch_sink",
    "batch_to_rows",
    "check_nulls",
    "do_on_next_async",
    "flat_map_async",
    "from_async_iterable",
    "from_coroutine",
    "map_async",
    "none_index",
    "rows_to_batch",
    "set_assembly_hook",
    "set_tracing",
    "to_async_iterator",
    "tracing_enabled",
]

# name -> the module defining it (relative to this package), imported on first use
_LAZY = {
    # the asyncio bridge (rstreams.aio)
    "AsyncIteratorSubscriber": ".operators._async_iterator",
    "FlowableAsyncIterator": ".operators._async_iterator",
    "await_last": ".operators._async_iterator",
    "to_async_iterator": ".operators._async_iterator",
    "do_on_next_async": ".operators._map_async",
    "flat_map_async": ".operators._map_async",
    "map_async": ".operators._map_async",
    "from_async_iterable": ".sources._async",
    "from_coroutine": ".sources._async",
    # retry policies (rstreams.retry)
    "Retry": "._retry_policy",
    "RetryExhaustedError": "._retry_policy",
    "RetrySignal": "._retry_policy",
    "RetrySpec": "._retry_policy",
    # processors (rstreams.processors)
    "AsyncProcessor": "._processors._async",
    "FlowableProcessor": "._processors._base",
    "SerializedProcessor": "._processors._base",
    "BehaviorProcessor": "._processors._behavior",
    "MulticastProcessor": "._processors._multicast",
    "PublishProcessor": "._processors._publish",
    "ReplayProcessor": "._processors._replay",
    "UnicastProcessor": "._processors._unicast",
    # assembly tracing and the assembly hook (rstreams.plugins)
    "assembly_hook": "._assembly",
    "set_assembly_hook": "._assembly",
    "set_tracing": "._assembly",
    "tracing_enabled": "._assembly",
    # building blocks (rstreams.spark)
    "BasicSubscriber": "._base",
    "Fusion": "._fused",
    "batch_sink": "._fused",
    "none_index": "._fused",
    "batch_to_rows": "._arrow",
    "check_nulls": "._arrow",
    "rows_to_batch": "._arrow",
}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'rstreams.flowable.lowlevel' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(mod, __package__), name)
    globals()[name] = value  # later lookups are plain module attributes
    return value
