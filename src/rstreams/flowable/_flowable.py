"""``Flowable``: the library's Publisher, with operators in the tradition of RxJava 3.

The facade is thin: every method imports its operator module on first use (keeping
``import rstreams`` light) and returns a new ``Flowable``. Each operator lives in its own private
module under ``sources/`` or ``operators/``, named after the RxJava operator in snake_case.

Every public method documents an example, "Backpressure:" (how it treats demand) and "Scheduler:"
(which thread it runs on; most operators run on the thread that signals them), as RxJava's
javadoc does; ``tests/meta/test_docstrings.py`` keeps it so.
"""

from __future__ import annotations

import builtins
import concurrent.futures
import logging
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from .._internal import plugins
from .._internal.requests import DEFAULT_PREFETCH
from .._internal.subscribers import Disposable, LambdaSubscriber, StrictSubscriber
from .._spec import MAX_DEMAND, Publisher, Subscriber, Subscription, null_element_message
from ..errors import NoneElementError
from ._enums import NOTSET, BackpressureOverflow, BackpressureStrategy
from ._facade_aggregate import AggregateMixin
from ._facade_aio import AsyncioMixin
from ._facade_boundary import BoundaryMixin
from ._facade_combine import CombineMixin
from ._facade_event_time import EventTimeMixin
from ._facade_group import GroupMixin
from ._facade_interop import InteropMixin
from ._facade_retry import RetryMixin
from ._facade_time import TimeOperatorsMixin
from ._lazy import lazy_function

if TYPE_CHECKING:
    import asyncio

    from ..schedulers import Scheduler
    from ..testing import TestSubscriber
    from ._fused import Fusion
    from ._parallel import ParallelFlowable
    from .operators._multicast import ConnectableFlowable

# Operator implementations, imported on first use (``import rstreams`` stays light). A
# ``from ... import`` statement inside each method cost ~2 us per call on CPython 3.11 (a
# failed ``__path__`` lookup formats an AttributeError every time): more than building most
# operators, and paid per element by code that assembles inner Flowables in flat_map.
if TYPE_CHECKING:
    from ._parallel import parallel as _i_parallel
    from .operators._aggregate import all_ as _i_all_
    from .operators._aggregate import any_ as _i_any_
    from .operators._aggregate import collect as _i_collect
    from .operators._aggregate import contains as _i_contains
    from .operators._aggregate import count as _i_count
    from .operators._aggregate import reduce as _i_reduce
    from .operators._aggregate import to_dict as _i_to_dict
    from .operators._aggregate import to_list as _i_to_list
    from .operators._amb import amb as _i_amb
    from .operators._backpressure import on_backpressure_buffer as _i_on_backpressure_buffer
    from .operators._backpressure import on_backpressure_drop as _i_on_backpressure_drop
    from .operators._backpressure import on_backpressure_latest as _i_on_backpressure_latest
    from .operators._backpressure import rebatch_requests as _i_rebatch_requests
    from .operators._blocking import BlockingIterator
    from .operators._blocking import blocking_first as _i_blocking_first
    from .operators._blocking import blocking_for_each as _i_blocking_for_each
    from .operators._blocking import blocking_iterable as _i_blocking_iterable
    from .operators._blocking import blocking_last as _i_blocking_last
    from .operators._blocking import blocking_single as _i_blocking_single
    from .operators._blocking import blocking_subscribe as _i_blocking_subscribe
    from .operators._blocking import to_future as _i_to_future
    from .operators._buffer import buffer as _i_buffer
    from .operators._checkpoint import checkpoint as _i_checkpoint
    from .operators._combine_latest import combine_latest as _i_combine_latest
    from .operators._combine_latest import with_latest_from as _i_with_latest_from
    from .operators._concat import concat as _i_concat
    from .operators._concat import concat_with as _i_concat_with
    from .operators._concat import start_with as _i_start_with
    from .operators._concat import switch_if_empty as _i_switch_if_empty
    from .operators._concat_map import concat_map as _i_concat_map
    from .operators._concat_map_eager import concat_map_eager as _i_concat_map_eager
    from .operators._default_if_empty import default_if_empty as _i_default_if_empty
    from .operators._distinct import distinct as _i_distinct
    from .operators._distinct import distinct_until_changed as _i_distinct_until_changed
    from .operators._do_on import do_after_terminate as _i_do_after_terminate
    from .operators._do_on import do_finally as _i_do_finally
    from .operators._do_on import do_on_cancel as _i_do_on_cancel
    from .operators._do_on import do_on_complete as _i_do_on_complete
    from .operators._do_on import do_on_each as _i_do_on_each
    from .operators._do_on import do_on_error as _i_do_on_error
    from .operators._do_on import do_on_next as _i_do_on_next
    from .operators._do_on import do_on_request as _i_do_on_request
    from .operators._do_on import do_on_subscribe as _i_do_on_subscribe
    from .operators._do_on import do_on_terminate as _i_do_on_terminate
    from .operators._element_at import element_at as _i_element_at
    from .operators._element_at import element_at_or_error as _i_element_at_or_error
    from .operators._element_at import first as _i_first
    from .operators._element_at import last as _i_last
    from .operators._flat_map import flat_map as _i_flat_map
    from .operators._flat_map_iterable import flat_map_iterable as _i_flat_map_iterable
    from .operators._ignore_elements import ignore_elements as _i_ignore_elements
    from .operators._lift import lift as _i_lift
    from .operators._log import log as _i_log
    from .operators._map_filter import filter_ as _i_filter_
    from .operators._map_filter import hide as _i_hide
    from .operators._map_filter import map_ as _i_map_
    from .operators._map_filter import map_not_none as _i_map_not_none
    from .operators._merge import merge as _i_merge
    from .operators._multicast import cache as _i_cache
    from .operators._multicast import publish as _i_publish
    from .operators._multicast import replay as _i_replay
    from .operators._multicast import share as _i_share
    from .operators._name import name as _i_name
    from .operators._name import tag as _i_tag
    from .operators._observe_on import observe_on as _i_observe_on
    from .operators._on_error import on_error_complete as _i_on_error_complete
    from .operators._on_error import on_error_resume_next as _i_on_error_resume_next
    from .operators._on_error import on_error_return as _i_on_error_return
    from .operators._retry_repeat import repeat as _i_repeat
    from .operators._retry_repeat import retry as _i_retry
    from .operators._scan import scan as _i_scan
    from .operators._skip_last import skip_last as _i_skip_last
    from .operators._skip_until import skip_until as _i_skip_until
    from .operators._skip_while import skip_while as _i_skip_while
    from .operators._subscribe_on import subscribe_on as _i_subscribe_on
    from .operators._switch_map import switch_map as _i_switch_map
    from .operators._take_last import take_last as _i_take_last
    from .operators._take_skip import skip as _i_skip
    from .operators._take_skip import take as _i_take
    from .operators._take_until import take_until as _i_take_until
    from .operators._take_while import take_while as _i_take_while
    from .operators._zip import zip_ as _i_zip_
    from .sources._basic import defer as _i_defer
    from .sources._basic import error as _i_make_error
    from .sources._basic import from_callable as _i_from_callable
    from .sources._basic import from_iterable as _i_from_iterable
    from .sources._basic import from_publisher as _i_from_publisher
    from .sources._basic import never as _i_never
    from .sources._basic import range_ as _i_range_
    from .sources._create import create as _i_create
    from .sources._future import from_future as _i_from_future
    from .sources._generate import generate as _i_generate
    from .sources._using import using as _i_using
else:
    _i_all_ = lazy_function(".operators._aggregate", "all_", "_i_all_", globals())
    _i_amb = lazy_function(".operators._amb", "amb", "_i_amb", globals())
    _i_any_ = lazy_function(".operators._aggregate", "any_", "_i_any_", globals())
    _i_blocking_first = lazy_function(".operators._blocking", "blocking_first", "_i_blocking_first", globals())
    _i_blocking_for_each = lazy_function(".operators._blocking", "blocking_for_each", "_i_blocking_for_each", globals())
    _i_blocking_single = lazy_function(".operators._blocking", "blocking_single", "_i_blocking_single", globals())
    _i_blocking_iterable = lazy_function(".operators._blocking", "blocking_iterable", "_i_blocking_iterable", globals())
    _i_blocking_last = lazy_function(".operators._blocking", "blocking_last", "_i_blocking_last", globals())
    _i_blocking_subscribe = lazy_function(".operators._blocking", "blocking_subscribe", "_i_blocking_subscribe", globals())
    _i_buffer = lazy_function(".operators._buffer", "buffer", "_i_buffer", globals())
    _i_cache = lazy_function(".operators._multicast", "cache", "_i_cache", globals())
    _i_checkpoint = lazy_function(".operators._checkpoint", "checkpoint", "_i_checkpoint", globals())
    _i_collect = lazy_function(".operators._aggregate", "collect", "_i_collect", globals())
    _i_combine_latest = lazy_function(".operators._combine_latest", "combine_latest", "_i_combine_latest", globals())
    _i_concat = lazy_function(".operators._concat", "concat", "_i_concat", globals())
    _i_concat_map = lazy_function(".operators._concat_map", "concat_map", "_i_concat_map", globals())
    _i_concat_map_eager = lazy_function(".operators._concat_map_eager", "concat_map_eager", "_i_concat_map_eager", globals())
    _i_concat_with = lazy_function(".operators._concat", "concat_with", "_i_concat_with", globals())
    _i_contains = lazy_function(".operators._aggregate", "contains", "_i_contains", globals())
    _i_count = lazy_function(".operators._aggregate", "count", "_i_count", globals())
    _i_create = lazy_function(".sources._create", "create", "_i_create", globals())
    _i_default_if_empty = lazy_function(".operators._default_if_empty", "default_if_empty", "_i_default_if_empty", globals())
    _i_defer = lazy_function(".sources._basic", "defer", "_i_defer", globals())
    _i_distinct = lazy_function(".operators._distinct", "distinct", "_i_distinct", globals())
    _i_distinct_until_changed = lazy_function(".operators._distinct", "distinct_until_changed", "_i_distinct_until_changed", globals())
    _i_do_after_terminate = lazy_function(".operators._do_on", "do_after_terminate", "_i_do_after_terminate", globals())
    _i_do_finally = lazy_function(".operators._do_on", "do_finally", "_i_do_finally", globals())
    _i_do_on_each = lazy_function(".operators._do_on", "do_on_each", "_i_do_on_each", globals())
    _i_do_on_terminate = lazy_function(".operators._do_on", "do_on_terminate", "_i_do_on_terminate", globals())
    _i_do_on_cancel = lazy_function(".operators._do_on", "do_on_cancel", "_i_do_on_cancel", globals())
    _i_do_on_complete = lazy_function(".operators._do_on", "do_on_complete", "_i_do_on_complete", globals())
    _i_do_on_error = lazy_function(".operators._do_on", "do_on_error", "_i_do_on_error", globals())
    _i_do_on_next = lazy_function(".operators._do_on", "do_on_next", "_i_do_on_next", globals())
    _i_do_on_request = lazy_function(".operators._do_on", "do_on_request", "_i_do_on_request", globals())
    _i_do_on_subscribe = lazy_function(".operators._do_on", "do_on_subscribe", "_i_do_on_subscribe", globals())
    _i_element_at = lazy_function(".operators._element_at", "element_at", "_i_element_at", globals())
    _i_element_at_or_error = lazy_function(".operators._element_at", "element_at_or_error", "_i_element_at_or_error", globals())
    _i_filter_ = lazy_function(".operators._map_filter", "filter_", "_i_filter_", globals())
    _i_first = lazy_function(".operators._element_at", "first", "_i_first", globals())
    _i_flat_map = lazy_function(".operators._flat_map", "flat_map", "_i_flat_map", globals())
    _i_flat_map_iterable = lazy_function(".operators._flat_map_iterable", "flat_map_iterable", "_i_flat_map_iterable", globals())
    _i_from_callable = lazy_function(".sources._basic", "from_callable", "_i_from_callable", globals())
    _i_from_future = lazy_function(".sources._future", "from_future", "_i_from_future", globals())
    _i_from_iterable = lazy_function(".sources._basic", "from_iterable", "_i_from_iterable", globals())
    _i_from_publisher = lazy_function(".sources._basic", "from_publisher", "_i_from_publisher", globals())
    _i_generate = lazy_function(".sources._generate", "generate", "_i_generate", globals())
    _i_hide = lazy_function(".operators._map_filter", "hide", "_i_hide", globals())
    _i_ignore_elements = lazy_function(".operators._ignore_elements", "ignore_elements", "_i_ignore_elements", globals())
    _i_last = lazy_function(".operators._element_at", "last", "_i_last", globals())
    _i_lift = lazy_function(".operators._lift", "lift", "_i_lift", globals())
    _i_log = lazy_function(".operators._log", "log", "_i_log", globals())
    _i_make_error = lazy_function(".sources._basic", "error", "_i_make_error", globals())
    _i_map_ = lazy_function(".operators._map_filter", "map_", "_i_map_", globals())
    _i_map_not_none = lazy_function(".operators._map_filter", "map_not_none", "_i_map_not_none", globals())
    _i_merge = lazy_function(".operators._merge", "merge", "_i_merge", globals())
    _i_name = lazy_function(".operators._name", "name", "_i_name", globals())
    _i_tag = lazy_function(".operators._name", "tag", "_i_tag", globals())
    _i_never = lazy_function(".sources._basic", "never", "_i_never", globals())
    _i_observe_on = lazy_function(".operators._observe_on", "observe_on", "_i_observe_on", globals())
    _i_on_backpressure_buffer = lazy_function(".operators._backpressure", "on_backpressure_buffer", "_i_on_backpressure_buffer", globals())
    _i_on_backpressure_drop = lazy_function(".operators._backpressure", "on_backpressure_drop", "_i_on_backpressure_drop", globals())
    _i_on_backpressure_latest = lazy_function(".operators._backpressure", "on_backpressure_latest", "_i_on_backpressure_latest", globals())
    _i_on_error_complete = lazy_function(".operators._on_error", "on_error_complete", "_i_on_error_complete", globals())
    _i_on_error_resume_next = lazy_function(".operators._on_error", "on_error_resume_next", "_i_on_error_resume_next", globals())
    _i_on_error_return = lazy_function(".operators._on_error", "on_error_return", "_i_on_error_return", globals())
    _i_parallel = lazy_function("._parallel", "parallel", "_i_parallel", globals())
    _i_publish = lazy_function(".operators._multicast", "publish", "_i_publish", globals())
    _i_range_ = lazy_function(".sources._basic", "range_", "_i_range_", globals())
    _i_rebatch_requests = lazy_function(".operators._backpressure", "rebatch_requests", "_i_rebatch_requests", globals())
    _i_reduce = lazy_function(".operators._aggregate", "reduce", "_i_reduce", globals())
    _i_repeat = lazy_function(".operators._retry_repeat", "repeat", "_i_repeat", globals())
    _i_replay = lazy_function(".operators._multicast", "replay", "_i_replay", globals())
    _i_retry = lazy_function(".operators._retry_repeat", "retry", "_i_retry", globals())
    _i_scan = lazy_function(".operators._scan", "scan", "_i_scan", globals())
    _i_share = lazy_function(".operators._multicast", "share", "_i_share", globals())
    _i_skip = lazy_function(".operators._take_skip", "skip", "_i_skip", globals())
    _i_skip_last = lazy_function(".operators._skip_last", "skip_last", "_i_skip_last", globals())
    _i_skip_until = lazy_function(".operators._skip_until", "skip_until", "_i_skip_until", globals())
    _i_skip_while = lazy_function(".operators._skip_while", "skip_while", "_i_skip_while", globals())
    _i_start_with = lazy_function(".operators._concat", "start_with", "_i_start_with", globals())
    _i_subscribe_on = lazy_function(".operators._subscribe_on", "subscribe_on", "_i_subscribe_on", globals())
    _i_switch_if_empty = lazy_function(".operators._concat", "switch_if_empty", "_i_switch_if_empty", globals())
    _i_switch_map = lazy_function(".operators._switch_map", "switch_map", "_i_switch_map", globals())
    _i_take = lazy_function(".operators._take_skip", "take", "_i_take", globals())
    _i_take_last = lazy_function(".operators._take_last", "take_last", "_i_take_last", globals())
    _i_take_until = lazy_function(".operators._take_until", "take_until", "_i_take_until", globals())
    _i_take_while = lazy_function(".operators._take_while", "take_while", "_i_take_while", globals())
    _i_to_dict = lazy_function(".operators._aggregate", "to_dict", "_i_to_dict", globals())
    _i_to_future = lazy_function(".operators._blocking", "to_future", "_i_to_future", globals())
    _i_to_list = lazy_function(".operators._aggregate", "to_list", "_i_to_list", globals())
    _i_using = lazy_function(".sources._using", "using", "_i_using", globals())
    _i_with_latest_from = lazy_function(".operators._combine_latest", "with_latest_from", "_i_with_latest_from", globals())
    _i_zip_ = lazy_function(".operators._zip", "zip_", "_i_zip_", globals())


__all__ = ["Flowable"]

T = TypeVar("T")
R = TypeVar("R")
U = TypeVar("U")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
S = TypeVar("S")
# Static factories are generic in their own type variable (E), not in the class's T: a checker
# cannot solve the class's T from a call on the bare class (pyright: ``Flowable[Unknown]``).
E = TypeVar("E")
# zip / combine_latest / with_latest_from sources and pipe stages
T1 = TypeVar("T1")
T2 = TypeVar("T2")
T3 = TypeVar("T3")
T4 = TypeVar("T4")
T5 = TypeVar("T5")
T6 = TypeVar("T6")
T7 = TypeVar("T7")
T8 = TypeVar("T8")


class Flowable(
    TimeOperatorsMixin[T],
    AggregateMixin[T],
    CombineMixin[T],
    BoundaryMixin[T],
    GroupMixin[T],
    EventTimeMixin[T],
    InteropMixin[T],
    RetryMixin[T],
    AsyncioMixin[T],
    Generic[T],
):
    """A backpressured stream of elements: a Reactive Streams ``Publisher`` with operators.

    Example::

        >>> Flowable.range(1, 5).map(lambda x: x * 10).filter(lambda x: x > 20).to_list().blocking_first()
        [30, 40, 50]

    Backpressure: every operator honours ``request(n)`` from downstream (rule 1.1) unless its
    docstring says otherwise.
    """

    __slots__ = ()

    # ------------------------------------------------------------------------------------------
    # Subscribing

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        """Subscribe a library-internal (relaxed-contract) subscriber. Subclasses implement it."""
        raise NotImplementedError

    def _fused(self) -> Fusion[T] | None:
        """The assembly-time fusion description of this Flowable, or None if it does not fuse."""
        return None

    @overload
    def subscribe(self, subscriber: Subscriber[T]) -> None: ...

    @overload
    def subscribe(
        self,
        on_next: Callable[[T], object] | None = None,
        /,
        on_error: Callable[[BaseException], object] | None = None,
        on_complete: Callable[[], object] | None = None,
        *,
        on_subscribe: Callable[[Subscription], object] | None = None,
    ) -> Disposable: ...

    @overload
    def subscribe(
        self,
        *,
        on_next: Callable[[T], object] | None,
        on_error: Callable[[BaseException], object] | None = None,
        on_complete: Callable[[], object] | None = None,
        on_subscribe: Callable[[Subscription], object] | None = None,
    ) -> Disposable: ...

    def subscribe(
        self,
        subscriber: Any = NOTSET,
        on_error: Callable[[BaseException], Any] | None = None,
        on_complete: Callable[[], Any] | None = None,
        *,
        on_next: Callable[[T], Any] | None = None,
        on_subscribe: Callable[[Subscription], Any] | None = None,
    ) -> Disposable | None:
        """Subscribe a Subscriber (returns None), or callbacks (returns a :class:`Disposable`).

        Example::

            Flowable.just(1, 2).subscribe(print, print, lambda: print("done"))   # on_next, on_error, on_complete
            Flowable.just(1, 2).subscribe(on_next=print, on_complete=lambda: print("done"))
            Flowable.range(0, 3).do_on_next(print).subscribe()   # run it for its side effects
            d = Flowable.never().subscribe(print)
            d.dispose()

        The callbacks come positionally (``on_next, on_error, on_complete``, as RxJava and RxPY
        write them) or by keyword. ``subscribe()`` with no argument runs the stream and ignores its
        elements. Without ``on_error``, a failure goes to the undeliverable-error hook
        (:mod:`rstreams.plugins`) as an ``OnErrorNotImplementedError``, never silently.
        A foreign Subscriber is wrapped so that it receives strictly rule-abiding signals (rules
        1.3, 2.12, 2.13, 3.9). ``subscribe(None)`` raises TypeError (rule 1.9); anything that is
        neither a Subscriber nor a callable (``subscribe(42)``) raises TypeError at the call.

        Backpressure: the callback form requests unbounded demand (unless ``on_subscribe`` is
        given: then that callback receives the Subscription and requests itself); a Subscriber
        requests what it wants.

        Scheduler: none; callbacks run on the thread that signals (add ``observe_on`` to move them,
        or use :meth:`blocking_subscribe` to run them on the calling thread).
        """
        if subscriber is NOTSET or subscriber is None or not hasattr(subscriber, "on_subscribe"):
            if subscriber is NOTSET or subscriber is None:
                if (
                    subscriber is None
                    and on_next is None
                    and on_error is None
                    and on_complete is None
                    and on_subscribe is None
                ):
                    raise NoneElementError(null_element_message("subscribe", "1.9"))
            elif not callable(subscriber):
                raise TypeError(
                    f"subscribe(): expected a Subscriber or a callable (on_next), got "
                    f"{type(subscriber).__name__} {subscriber!r}"
                )
            elif on_next is not None:
                raise TypeError("subscribe(): give on_next either positionally or by keyword, not both")
            else:
                on_next = subscriber
            ls: LambdaSubscriber[T] = LambdaSubscriber(on_next, on_error, on_complete, on_subscribe)
            self._safe_subscribe(ls)
            return ls
        if on_next is not None or on_error is not None or on_complete is not None or on_subscribe is not None:
            raise TypeError("subscribe(): give a Subscriber or callbacks, not both")
        if getattr(subscriber, "_rs_no_wrap", False):
            self._safe_subscribe(subscriber)
            return None
        missing = [m for m in ("on_next", "on_error", "on_complete") if not callable(getattr(subscriber, m, None))]
        if missing:
            raise TypeError(
                f"subscribe(): {type(subscriber).__name__} has on_subscribe but no {', '.join(missing)}: "
                f"it is not a Subscriber"
            )
        self._safe_subscribe(StrictSubscriber(subscriber))
        return None

    def _safe_subscribe(self, subscriber: Subscriber[T]) -> None:
        try:
            self._subscribe_actual(subscriber)
        except Exception as e:  # rule 1.9: subscribe must return normally
            plugins.on_error(e, f"{type(self).__name__}.subscribe raised (a bug: rule 1.9)")

    def test(self, initial_request: int = MAX_DEMAND, *, cancel: bool = False) -> TestSubscriber[T]:
        """Subscribe a :class:`~rstreams.testing.TestSubscriber` and return it.

        Example::

            Flowable.just(1, 2).test().assert_result(1, 2).assert_no_violations()
            Flowable.range(0, 10).test(3).assert_values(0, 1, 2).assert_not_complete()

        Backpressure: the TestSubscriber requests ``initial_request`` (default: unbounded);
        ``ts.request(n)`` asks for more.
        Scheduler: none; the TestSubscriber records signals from any thread; ``await_done()`` and
        ``await_count(n)`` wait for asynchronous ones.
        """
        from ..testing import TestSubscriber

        ts: TestSubscriber[T] = TestSubscriber(initial_request)
        if cancel:
            ts.cancel()
        self.subscribe(ts)
        return ts

    # ------------------------------------------------------------------------------------------
    # Composition

    @overload
    def pipe(self) -> Flowable[T]: ...

    @overload
    def pipe(
        self,
        op1: Callable[[Flowable[T]], Flowable[T1]],
        /,
    ) -> Flowable[T1]: ...

    @overload
    def pipe(
        self,
        op1: Callable[[Flowable[T]], Flowable[T1]],
        op2: Callable[[Flowable[T1]], Flowable[T2]],
        /,
    ) -> Flowable[T2]: ...

    @overload
    def pipe(
        self,
        op1: Callable[[Flowable[T]], Flowable[T1]],
        op2: Callable[[Flowable[T1]], Flowable[T2]],
        op3: Callable[[Flowable[T2]], Flowable[T3]],
        /,
    ) -> Flowable[T3]: ...

    @overload
    def pipe(
        self,
        op1: Callable[[Flowable[T]], Flowable[T1]],
        op2: Callable[[Flowable[T1]], Flowable[T2]],
        op3: Callable[[Flowable[T2]], Flowable[T3]],
        op4: Callable[[Flowable[T3]], Flowable[T4]],
        /,
    ) -> Flowable[T4]: ...

    @overload
    def pipe(
        self,
        op1: Callable[[Flowable[T]], Flowable[T1]],
        op2: Callable[[Flowable[T1]], Flowable[T2]],
        op3: Callable[[Flowable[T2]], Flowable[T3]],
        op4: Callable[[Flowable[T3]], Flowable[T4]],
        op5: Callable[[Flowable[T4]], Flowable[T5]],
        /,
    ) -> Flowable[T5]: ...

    @overload
    def pipe(
        self,
        op1: Callable[[Flowable[T]], Flowable[T1]],
        op2: Callable[[Flowable[T1]], Flowable[T2]],
        op3: Callable[[Flowable[T2]], Flowable[T3]],
        op4: Callable[[Flowable[T3]], Flowable[T4]],
        op5: Callable[[Flowable[T4]], Flowable[T5]],
        op6: Callable[[Flowable[T5]], Flowable[T6]],
        /,
    ) -> Flowable[T6]: ...

    @overload
    def pipe(
        self,
        op1: Callable[[Flowable[T]], Flowable[T1]],
        op2: Callable[[Flowable[T1]], Flowable[T2]],
        op3: Callable[[Flowable[T2]], Flowable[T3]],
        op4: Callable[[Flowable[T3]], Flowable[T4]],
        op5: Callable[[Flowable[T4]], Flowable[T5]],
        op6: Callable[[Flowable[T5]], Flowable[T6]],
        op7: Callable[[Flowable[T6]], Flowable[T7]],
        /,
    ) -> Flowable[T7]: ...

    @overload
    def pipe(
        self,
        op1: Callable[[Flowable[T]], Flowable[T1]],
        op2: Callable[[Flowable[T1]], Flowable[T2]],
        op3: Callable[[Flowable[T2]], Flowable[T3]],
        op4: Callable[[Flowable[T3]], Flowable[T4]],
        op5: Callable[[Flowable[T4]], Flowable[T5]],
        op6: Callable[[Flowable[T5]], Flowable[T6]],
        op7: Callable[[Flowable[T6]], Flowable[T7]],
        op8: Callable[[Flowable[T7]], Flowable[T8]],
        /,
    ) -> Flowable[T8]: ...

    @overload
    def pipe(
        self,
        op1: Callable[[Flowable[T]], Flowable[Any]],
        op2: Callable[[Flowable[Any]], Flowable[Any]],
        op3: Callable[[Flowable[Any]], Flowable[Any]],
        op4: Callable[[Flowable[Any]], Flowable[Any]],
        op5: Callable[[Flowable[Any]], Flowable[Any]],
        op6: Callable[[Flowable[Any]], Flowable[Any]],
        op7: Callable[[Flowable[Any]], Flowable[Any]],
        op8: Callable[[Flowable[Any]], Flowable[Any]],
        op9: Callable[[Flowable[Any]], Flowable[Any]],
        /,
        *more: Callable[[Flowable[Any]], Flowable[Any]],
    ) -> Flowable[Any]: ...

    def pipe(self, *operators: Callable[[Flowable[Any]], Flowable[Any]]) -> Flowable[Any]:
        """Apply functions ``Flowable -> Flowable`` left to right.

        Example::

            def evens(f): return f.filter(lambda x: x % 2 == 0)
            Flowable.range(0, 10).pipe(evens, lambda f: f.take(2)).test().assert_result(0, 2)

        Backpressure: whatever the functions build (``pipe`` only applies them).
        Scheduler: none; the functions run once, at assembly, on the calling thread.
        """
        result: Flowable[Any] = self
        for op in operators:
            result = op(result)
        return result

    def compose(self, transformer: Callable[[Flowable[T]], Publisher[R]]) -> Flowable[R]:
        """Apply a reusable ``Flowable -> Publisher`` transformer at assembly time.

        Example::

            Flowable.range(0, 3).compose(lambda f: f.map(str)).test().assert_result("0", "1", "2")

        Backpressure: that of the Publisher ``transformer`` returns (a foreign one is wrapped by
        :meth:`from_publisher`).
        Scheduler: none; ``transformer`` runs once, at assembly, on the calling thread.
        """
        return Flowable.from_publisher(transformer(self))

    def lift(self, operator: Callable[[Subscriber[R]], Subscriber[T]]) -> Flowable[R]:
        """Insert a custom operator given as ``downstream Subscriber -> upstream Subscriber``.

        Example::

            class Doubler:                      # the upstream Subscriber of the custom stage
                def __init__(self, downstream): self.down = downstream
                def on_subscribe(self, s): self.down.on_subscribe(s)
                def on_next(self, x): self.down.on_next(x * 2)
                def on_error(self, e): self.down.on_error(e)
                def on_complete(self): self.down.on_complete()
            Flowable.range(0, 3).lift(Doubler).test().assert_result(0, 2, 4)

        The Subscriber it returns is subscribed to this Flowable; it must honour the Reactive
        Streams rules towards ``downstream`` (it is wrapped in the strict subscriber unless it sets
        ``_rs_no_wrap = True``).

        Backpressure: whatever the custom operator does.
        Scheduler: none of its own; the custom stage runs on the threads that signal it (it may hand
        signals to a Scheduler of its own).
        """
        return _i_lift(self, operator)

    def to(self, converter: Callable[[Flowable[T]], R]) -> R:
        """Convert this Flowable with ``converter`` (fluent conversion to anything).

        Example::

            Flowable.range(0, 3).to(list)                                  # [0, 1, 2]
            Flowable.just(1, 2).to(lambda f: f.count().blocking_first())   # 2

        Backpressure: whatever ``converter`` does (``to(list)`` iterates through
        :meth:`blocking_iterable`).
        Scheduler: none; ``converter`` runs at once, on the calling thread.
        """
        return converter(self)

    def hide(self) -> Flowable[T]:
        """Hide the identity of this Flowable: breaks fusion and any optimisation that relies on
        the source's type (as RxJava's ``hide``).

        Example::

            Flowable.range(0, 3).hide().test().assert_result(0, 1, 2)

        Backpressure: passes requests through.
        Scheduler: none; signals stay on the upstream's thread.
        """
        return _i_hide(self)

    def checkpoint(self, description: str | None = None, *, trace: bool = False) -> Flowable[T]:
        """Mark this point of the pipeline: an error passing it gets a note with ``description``.

        Example::

            ts = Flowable.just(0).map(lambda x: 1 // x).checkpoint("ratios").test()
            ts.errors[0].__notes__   # ['checkpoint: ratios']

        As Reactor's ``checkpoint``: ``trace=True`` adds the user's ``file:line`` that built the
        checkpoint (``checkpoint: ratios (etl.py:42)``), found once at assembly; without a
        description the note is ``checkpoint (etl.py:42)``. The error and its traceback are
        otherwise unchanged. See also ``rstreams.plugins.enable_assembly_tracing()``.

        Backpressure: passes requests through.
        Scheduler: none; signals stay on the upstream's thread.
        """
        return _i_checkpoint(self, description, trace)

    def log(
        self,
        name: str | None = None,
        level: int = logging.INFO,
        signals: Iterable[str] | None = None,
        *,
        logger: logging.Logger | None = None,
    ) -> Flowable[T]:
        """Log the signals crossing this point through :mod:`logging` (Reactor's ``log``).

        Example::

            logging.basicConfig(level=logging.INFO)
            Flowable.range(0, 3).log("numbers").take(2).blocking_subscribe(print)
            # INFO:rstreams.log.numbers:numbers | on_subscribe() | thread MainThread
            # INFO:rstreams.log.numbers:numbers | request(2) | thread MainThread
            # INFO:rstreams.log.numbers:numbers | cancel() | thread MainThread

        ``signals`` chooses among ``"on_subscribe"``, ``"request"``, ``"on_next"``, ``"on_error"``,
        ``"on_complete"`` and ``"cancel"``; by default every one but ``"on_next"``. Each record
        names the stage (``name``, or ``log#<n>``) and the thread; the logger is
        ``rstreams.log.<name>`` (``rstreams.log`` without a name) unless ``logger`` is given, and
        records go out at ``level``, errors included.

        Backpressure: passes requests through (and logs them).
        Scheduler: none; each record is written on the thread that makes the signal.
        """
        return _i_log(self, name, level, signals, logger)

    def name(self, name: str) -> Flowable[T]:
        """Name this stage: its signals are counted in :mod:`rstreams.metrics` under ``name``.

        Example::

            Flowable.range(0, 10).name("numbers").take(3).test().assert_result(0, 1, 2)
            metrics.get_registry().snapshot()["numbers"]   # emitted=3, requested=3, cancelled=1, ...

        Counters per (name, tags), over every subscription: ``subscribed``, ``requested``,
        ``emitted``, ``completed``, ``failed``, ``cancelled``; gauges of the live subscriptions:
        ``outstanding_demand`` and ``queued`` (elements waiting in the stage just above, where it
        keeps a queue). Counting costs one attribute increment per element and no lock.
        ``rstreams.debug.describe`` shows the name in a running chain's picture.

        Backpressure: passes requests through (and counts them).
        Scheduler: none; signals stay on the upstream's thread.
        """
        return _i_name(self, name)

    def tag(self, key: str, value: str) -> Flowable[T]:
        """Add a tag to this named stage's metrics (a stage named ``"unnamed"`` when not named).

        Example::

            Flowable.range(0, 3).name("orders").tag("region", "eu").test().assert_result(0, 1, 2)
            metrics.get_registry().snapshot()["orders{region=eu}"].emitted   # 3

        Backpressure: passes requests through (and counts them).
        Scheduler: none; signals stay on the upstream's thread.
        """
        return _i_tag(self, key, value)

    # ------------------------------------------------------------------------------------------
    # Sources

    @staticmethod
    def just(*items: E) -> Flowable[E]:
        """Emit the given items, then complete.

        Example::

            Flowable.just(1, 2, 3).test().assert_result(1, 2, 3)

        Backpressure: emits only what is requested. ``None`` items raise TypeError (rule 2.13).
        Scheduler: none; elements are produced on the thread that requests them, inside ``request`` (the
        subscribing thread when the subscriber requests from ``on_subscribe``).
        """
        return _basic.just(*items)

    @staticmethod
    def empty() -> Flowable[Any]:
        """Complete immediately after ``on_subscribe``.

        Example::

            Flowable.empty().test().assert_result()

        Backpressure: no elements: completes at once, without waiting for a request.
        Scheduler: none; ``on_complete`` comes on the subscribing thread, inside ``subscribe``.
        """
        return _basic.empty()

    @staticmethod
    def error(error: BaseException | Callable[[], BaseException]) -> Flowable[Any]:
        """Signal ``error`` (or the error returned by a supplier, per subscriber) after on_subscribe.

        Example::

            Flowable.error(ValueError("x")).test().assert_error(ValueError, match="x")

        Backpressure: no elements: signals the error at once, without waiting for a request.
        Scheduler: none; ``on_error`` comes on the subscribing thread, inside ``subscribe``.
        """
        return _i_make_error(error)

    @staticmethod
    def never() -> Flowable[Any]:
        """Never signal anything but ``on_subscribe``.

        Example::

            Flowable.never().test().assert_empty()

        Backpressure: no elements: requests are accepted and ignored.
        Scheduler: none; nothing is signalled after ``on_subscribe``.
        """
        return _i_never()

    @staticmethod
    def from_iterable(iterable: Iterable[E] | Callable[[], Iterable[E]]) -> Flowable[E]:
        """Emit the elements of ``iterable`` (``iter()`` is called once per subscriber).

        A collection (list, range, dict, ...) is re-iterated by every subscriber. An iterator (a
        generator, a file, ``map(...)``) can be iterated once: the first subscription takes it, and
        any later one (another subscriber, a ``retry`` or ``repeat`` resubscribing) gets
        ``on_error(OneShotIteratorError)`` instead of the silently shortened rest. To re-iterate, pass
        a factory, called once per subscription (a generator function or a lambda, as Reactor's
        ``fromStream(Supplier)``), or use ``Flowable.defer``.

        Example::

            Flowable.from_iterable([1, 2]).test().assert_result(1, 2)
            def lines(): yield from ("a", "b")
            Flowable.from_iterable(lines).repeat(2).test().assert_result("a", "b", "a", "b")
            Flowable.defer(lambda: Flowable.from_iterable(lines())).retry(3)   # same, with defer

        Backpressure: pull-driven, one ``next()`` per requested element; fuses with the stateless
        operators that follow it.
        Scheduler: none; elements are produced on the thread that requests them, inside ``request`` (the
        subscribing thread when the subscriber requests from ``on_subscribe``).
        """
        return _i_from_iterable(iterable)

    @overload
    @staticmethod
    def range(start: int, count: int) -> Flowable[int]: ...

    @overload
    @staticmethod
    def range(range_: builtins.range, /) -> Flowable[int]: ...

    @staticmethod
    def range(start: int | builtins.range, count: int | None = None) -> Flowable[int]:
        """Emit ``count`` consecutive ints starting at ``start`` (RxJava's ``range(start, count)``,
        not Python's ``range(start, stop)``); or the ints of a Python ``range`` object, any step.

        Example::

            Flowable.range(5, 3).test().assert_result(5, 6, 7)
            Flowable.range(range(10, 0, -3)).test().assert_result(10, 7, 4, 1)

        Backpressure: emits only what is requested; a fast path when demand is unbounded; fuses
        with the stateless operators that follow it.

        Scheduler: none; emits on the thread that requests (or subscribes).
        """
        return _i_range_(start, count)

    @staticmethod
    def defer(supplier: Callable[[], Publisher[E]]) -> Flowable[E]:
        """Call ``supplier`` for every subscriber and subscribe to the Publisher it returns.

        Example::

            Flowable.defer(lambda: Flowable.just(time.time()))

        Backpressure: that of the Publisher ``supplier`` returns.
        Scheduler: none; ``supplier`` runs on the subscribing thread, once per subscriber.
        """
        return _i_defer(supplier)

    @staticmethod
    def from_callable(fn: Callable[[], E]) -> Flowable[E]:
        """Call ``fn`` for each subscriber, emit its result, complete (RxJava ``fromCallable``).

        Example::

            Flowable.from_callable(lambda: 42).test().assert_result(42)

        Backpressure: ``fn`` runs when the subscriber subscribes; its result is held until
        requested. A raising ``fn`` signals its error; a ``None`` result signals TypeError.
        Wrap it in ``defer``/``subscribe_on`` to move slow work off the subscribing thread.
        Scheduler: none; ``fn`` runs on the subscribing thread; the value goes out there, or on the
        requesting thread if the request comes later.
        """
        return _i_from_callable(fn)

    @staticmethod
    def from_publisher(publisher: Publisher[E]) -> Flowable[E]:
        """View any Reactive Streams Publisher as a Flowable (a Flowable is returned as is).

        Example::

            Flowable.from_publisher(my_publisher).map(str)

        Backpressure: that of the wrapped Publisher: requests pass straight through.
        Scheduler: none; signals arrive on the wrapped Publisher's threads.
        """
        return _i_from_publisher(publisher)

    @staticmethod
    def from_future(
        future: concurrent.futures.Future[E] | asyncio.Future[E], timeout: float | None = None
    ) -> Flowable[E]:
        """Emit the result of a ``concurrent.futures.Future`` or an ``asyncio.Future``/``Task`` (or
        its exception as on_error).

        Example::

            fut = executor.submit(compute)
            Flowable.from_future(fut).test().await_done().assert_value_count(1)
            Flowable.from_future(asyncio.ensure_future(fetch()))    # an asyncio Task, from any thread

        An asyncio future is thread-safe to pass from any thread: its callback is added on its own
        loop. A coroutine is not a future: use ``from_coroutine(fn)``.

        ``timeout`` seconds without a result signals ``TimeoutError``; cancelling the subscription
        does not cancel the future.

        Backpressure: the value is emitted when requested.
        Scheduler: none; the signal arrives on the thread that completes the future (an asyncio
        future's loop thread); no thread is blocked.
        """
        return _i_from_future(future, timeout)

    @staticmethod
    def generate(
        state_fn: Callable[[], S],
        generator_fn: Callable[[S, Emitter[E]], S],
        dispose_fn: Callable[[S], Any] | None = None,
    ) -> Flowable[E]:
        """A pull-driven, stateful source: ``generator_fn(state, emitter) -> new state`` is called
        once per requested element and must call ``emitter.on_next(x)`` at most once (and/or
        ``on_complete()``/``on_error(e)``).

        Example::

            def step(n, emitter):
                emitter.on_next(n) if n < 3 else emitter.on_complete()
                return n + 1
            Flowable.generate(lambda: 0, step).test().assert_result(0, 1, 2)

        Backpressure: honoured exactly: the generator only runs when there is demand.
        Scheduler: none; ``state_fn`` runs on the subscribing thread, ``generator_fn`` on the requesting
        thread (inside ``request``), ``dispose_fn`` where the stream ends or is cancelled.
        """
        return _i_generate(state_fn, generator_fn, dispose_fn)

    @staticmethod
    def create(
        emitter_fn: Callable[[FlowableEmitter[E]], Any],
        strategy: BackpressureStrategy = BackpressureStrategy.BUFFER,
    ) -> Flowable[E]:
        """Bridge a push-style API: ``emitter_fn(emitter)`` pushes with ``emitter.on_next(x)`` from
        any thread (serialized); ``strategy`` says what happens to items pushed without demand.

        Example::

            def push(emitter):
                for i in range(3):
                    emitter.on_next(i)
                emitter.on_complete()
            Flowable.create(push, BackpressureStrategy.BUFFER).test().assert_result(0, 1, 2)

        Backpressure: per ``strategy`` (BUFFER, DROP, LATEST, ERROR, MISSING). The emitter has
        ``requested``, ``is_cancelled``, ``set_cancellable(fn)`` and ``try_on_error(e)``.
        Scheduler: none; ``emitter_fn`` runs on the subscribing thread; the emitter may be called from
        any thread: elements go downstream on the emitting thread, or, when they had to wait for demand
        (BUFFER, LATEST), on the thread that requests them.
        """
        return _i_create(emitter_fn, strategy)

    @staticmethod
    def using(
        resource_fn: Callable[[], S],
        source_fn: Callable[[S], Publisher[E]],
        dispose_fn: Callable[[S], Any],
        eager: bool = True,
    ) -> Flowable[E]:
        """Acquire a resource per subscriber, stream from it, and dispose of it on termination or
        cancellation (``eager``: before the terminal signal is passed on).

        Example::

            Flowable.using(lambda: open(path), lambda f: Flowable.from_iterable(f), lambda f: f.close())

        Backpressure: that of the Publisher ``source_fn`` returns: requests pass straight through.
        Scheduler: none; ``resource_fn`` and ``source_fn`` run on the subscribing thread, ``dispose_fn``
        on the thread that terminates or cancels the stream.
        """
        return _i_using(resource_fn, source_fn, dispose_fn, eager)

    @overload
    @staticmethod
    def concat(*sources: Publisher[E]) -> Flowable[E]: ...

    @overload
    @staticmethod
    def concat(sources: Iterable[Publisher[E]], /) -> Flowable[E]: ...

    @staticmethod
    def concat(*sources: Any) -> Flowable[Any]:
        """Emit the sources one after the other (each is subscribed when the previous completes);
        given one iterable of sources (a list), its sources (RxJava's ``concat(Iterable)``).

        Example::

            Flowable.concat(Flowable.just(1), Flowable.just(2)).test().assert_result(1, 2)
            Flowable.concat([Flowable.just(1), Flowable.just(2)]).test().assert_result(1, 2)

        Backpressure: demand not fulfilled by one source carries over to the next. Subscribing
        the next source is trampolined, so a million sources never hit the recursion limit.
        Scheduler: none; each source signals on its own thread; the next source is subscribed on the
        thread where the previous one completed.
        """
        return _i_concat(*sources)

    @overload
    @staticmethod
    def merge(
        *sources: Publisher[E], max_concurrency: int | None = None, prefetch: int = DEFAULT_PREFETCH, delay_error: bool = False
    ) -> Flowable[E]: ...

    @overload
    @staticmethod
    def merge(
        sources: Iterable[Publisher[E]],
        /,
        *,
        max_concurrency: int | None = None,
        prefetch: int = DEFAULT_PREFETCH,
        delay_error: bool = False,
    ) -> Flowable[E]: ...

    @staticmethod
    def merge(
        *sources: Any, max_concurrency: int | None = None, prefetch: int = DEFAULT_PREFETCH, delay_error: bool = False
    ) -> Flowable[Any]:
        """Interleave the elements of several sources as they arrive; given one iterable of sources
        (a list), its sources (RxJava's ``merge(Iterable)``).

        Example::

            Flowable.merge(Flowable.just(1), Flowable.just(2)).to_list().blocking_first()  # [1, 2]
            Flowable.merge([Flowable.just(1), Flowable.just(2)]).to_list().blocking_first()  # [1, 2]
            Flowable.merge(Flowable.error(ValueError()), Flowable.just(2), delay_error=True)  # 2, then the error

        Backpressure: each source is prefetched with ``prefetch`` (replenished at 75%), at most
        ``max_concurrency`` sources are subscribed at once; downstream demand is honoured.
        Errors: the first error cancels the other sources, unless ``delay_error`` (RxJava's
        ``mergeDelayError``): then every source runs to its end and the error (several: an
        ``ExceptionGroup``) arrives after all the elements.
        Scheduler: none; elements go out serially, on the thread of the source that signals them, or on
        the requesting thread when queued elements drain.
        """
        return _i_merge(*sources, max_concurrency=max_concurrency, prefetch=prefetch, delay_error=delay_error)

    @overload
    @staticmethod
    def zip(source1: Publisher[T1], source2: Publisher[T2], /, *, prefetch: int = DEFAULT_PREFETCH) -> Flowable[tuple[T1, T2]]: ...

    @overload
    @staticmethod
    def zip(
        source1: Publisher[T1], source2: Publisher[T2], zipper: Callable[[T1, T2], R], /, *, prefetch: int = DEFAULT_PREFETCH
    ) -> Flowable[R]: ...

    @overload
    @staticmethod
    def zip(source1: Publisher[T1], source2: Publisher[T2], source3: Publisher[T3], /, *, prefetch: int = DEFAULT_PREFETCH) -> Flowable[tuple[T1, T2, T3]]: ...

    @overload
    @staticmethod
    def zip(
        source1: Publisher[T1], source2: Publisher[T2], source3: Publisher[T3], zipper: Callable[[T1, T2, T3], R], /, *, prefetch: int = DEFAULT_PREFETCH
    ) -> Flowable[R]: ...

    @overload
    @staticmethod
    def zip(source1: Publisher[T1], source2: Publisher[T2], source3: Publisher[T3], source4: Publisher[T4], /, *, prefetch: int = DEFAULT_PREFETCH) -> Flowable[tuple[T1, T2, T3, T4]]: ...

    @overload
    @staticmethod
    def zip(
        source1: Publisher[T1], source2: Publisher[T2], source3: Publisher[T3], source4: Publisher[T4], zipper: Callable[[T1, T2, T3, T4], R], /, *, prefetch: int = DEFAULT_PREFETCH
    ) -> Flowable[R]: ...

    @overload
    @staticmethod
    def zip(
        sources: Iterable[Publisher[Any]], zipper: Callable[..., R], /, *, prefetch: int = DEFAULT_PREFETCH
    ) -> Flowable[R]: ...

    @overload
    @staticmethod
    def zip(sources: Iterable[Publisher[Any]], /, *, prefetch: int = DEFAULT_PREFETCH) -> Flowable[tuple[Any, ...]]: ...

    @overload
    @staticmethod
    def zip(
        source1: Publisher[Any],
        source2: Publisher[Any],
        source3: Publisher[Any],
        source4: Publisher[Any],
        source5: Publisher[Any],
        /,
        *more: Any,
        prefetch: int = DEFAULT_PREFETCH,
    ) -> Flowable[Any]: ...

    @staticmethod
    def zip(*sources: Any, prefetch: int = DEFAULT_PREFETCH) -> Flowable[Any]:
        """Combine the n-th elements of every source with a zipper (the last positional argument if
        it is a plain callable; otherwise rows are tuples). Completes when any source is exhausted.

        Example::

            Flowable.zip(Flowable.just(1, 2), Flowable.just("a", "b"), lambda a, b: f"{a}{b}")
            # "1a", "2b"

        Backpressure: each source is prefetched with ``prefetch`` (replenished at 75%).
        Scheduler: none; a row goes out, serially, on the thread of the source whose element completed
        it, or on the requesting thread.
        """
        return _i_zip_(*sources, prefetch=prefetch)

    @overload
    @staticmethod
    def combine_latest(source1: Publisher[T1], source2: Publisher[T2], /, *, prefetch: int = DEFAULT_PREFETCH) -> Flowable[tuple[T1, T2]]: ...

    @overload
    @staticmethod
    def combine_latest(
        source1: Publisher[T1], source2: Publisher[T2], combiner: Callable[[T1, T2], R], /, *, prefetch: int = DEFAULT_PREFETCH
    ) -> Flowable[R]: ...

    @overload
    @staticmethod
    def combine_latest(source1: Publisher[T1], source2: Publisher[T2], source3: Publisher[T3], /, *, prefetch: int = DEFAULT_PREFETCH) -> Flowable[tuple[T1, T2, T3]]: ...

    @overload
    @staticmethod
    def combine_latest(
        source1: Publisher[T1], source2: Publisher[T2], source3: Publisher[T3], combiner: Callable[[T1, T2, T3], R], /, *, prefetch: int = DEFAULT_PREFETCH
    ) -> Flowable[R]: ...

    @overload
    @staticmethod
    def combine_latest(source1: Publisher[T1], source2: Publisher[T2], source3: Publisher[T3], source4: Publisher[T4], /, *, prefetch: int = DEFAULT_PREFETCH) -> Flowable[tuple[T1, T2, T3, T4]]: ...

    @overload
    @staticmethod
    def combine_latest(
        source1: Publisher[T1], source2: Publisher[T2], source3: Publisher[T3], source4: Publisher[T4], combiner: Callable[[T1, T2, T3, T4], R], /, *, prefetch: int = DEFAULT_PREFETCH
    ) -> Flowable[R]: ...

    @overload
    @staticmethod
    def combine_latest(
        sources: Iterable[Publisher[Any]], combiner: Callable[..., R], /, *, prefetch: int = DEFAULT_PREFETCH
    ) -> Flowable[R]: ...

    @overload
    @staticmethod
    def combine_latest(sources: Iterable[Publisher[Any]], /, *, prefetch: int = DEFAULT_PREFETCH) -> Flowable[tuple[Any, ...]]: ...

    @overload
    @staticmethod
    def combine_latest(
        source1: Publisher[Any],
        source2: Publisher[Any],
        source3: Publisher[Any],
        source4: Publisher[Any],
        source5: Publisher[Any],
        /,
        *more: Any,
        prefetch: int = DEFAULT_PREFETCH,
    ) -> Flowable[Any]: ...

    @staticmethod
    def combine_latest(*sources: Any, prefetch: int = DEFAULT_PREFETCH) -> Flowable[Any]:
        """Combine the latest values of every source whenever one of them emits (the last
        positional argument combines them when it is a plain callable; otherwise tuples).

        Example::

            Flowable.combine_latest(temperatures, humidities, lambda t, h: (t, h))

        Backpressure: each source is prefetched with ``prefetch``; rows are emitted on demand.
        Completes when all sources complete, or when one completes without ever emitting.
        Scheduler: none; a row goes out, serially, on the thread of the source whose element made it, or
        on the requesting thread when rows waited for demand.
        """
        return _i_combine_latest(*sources, prefetch=prefetch)

    @overload
    @staticmethod
    def amb(*sources: Publisher[E]) -> Flowable[E]: ...

    @overload
    @staticmethod
    def amb(sources: Iterable[Publisher[E]], /) -> Flowable[E]: ...

    @staticmethod
    def amb(*sources: Any) -> Flowable[Any]:
        """Mirror the first source to signal anything; cancel the others. Given one iterable of
        sources (a list), its sources (RxJava's ``amb(Iterable)``).

        Example::

            Flowable.amb(primary_feed, backup_feed)
            Flowable.amb([primary_feed, backup_feed])

        Backpressure: requests made before a winner is known go to every source.
        Scheduler: none; signals arrive on the winning source's thread.
        """
        return _i_amb(*sources)

    # ------------------------------------------------------------------------------------------
    # Transform and filter

    def map(self, mapper: Callable[[T], R]) -> Flowable[R]:
        """Transform each element with ``mapper``.

        Example::

            Flowable.just(1, 2).map(lambda x: x * 10).test().assert_result(10, 20)

        Backpressure: passes requests through. A ``None`` result signals TypeError; a raising
        mapper cancels the upstream and signals its error.
        Scheduler: none; ``mapper`` runs, and elements go out, on the upstream's thread (inside
        ``request`` for a fused synchronous chain).
        """
        return _i_map_(self, mapper)

    def filter(self, predicate: Callable[[T], object]) -> Flowable[T]:
        """Keep the elements for which ``predicate`` is truthy.

        Example::

            Flowable.range(0, 5).filter(lambda x: x % 2).test().assert_result(1, 3)

        Backpressure: passes requests through and asks upstream for one more per dropped element
        (sources that support ``try_on_next`` skip that round trip).
        Scheduler: none; ``predicate`` runs, and elements go out, on the upstream's thread (inside
        ``request`` for a fused synchronous chain).
        """
        return _i_filter_(self, predicate)

    def map_not_none(self, mapper: Callable[[T], R | None]) -> Flowable[R]:
        """Map or drop: transform each element with ``mapper`` and drop the ``None`` results.

        RxJava 3's ``mapOptional`` with Python's optional, ``R | None``: ``None`` is the empty
        result (it can never be an element, rule 2.13), so ``map`` fails on it and this operator
        skips it. Named after what passes (the mapped values that are not ``None``) rather than
        Rust's ``filter_map``, which reads as a filter.

        Example::

            parse = lambda s: int(s) if s.isdigit() else None
            Flowable.just("1", "x", "3").map_not_none(parse).test().assert_result(1, 3)

        Backpressure: passes requests through and asks upstream for one more per dropped element
        (none when the demand is unbounded). A raising mapper cancels the upstream and signals its
        error.
        Scheduler: none; ``mapper`` runs, and elements go out, on the upstream's thread (inside
        ``request`` for a fused synchronous chain).
        """
        return _i_map_not_none(self, mapper)

    def flat_map_iterable(self, mapper: Callable[[T], Iterable[R]]) -> Flowable[R]:
        """Map each element to an iterable and emit its elements in order.

        Example::

            Flowable.just(1, 2).flat_map_iterable(lambda x: [x, x]).test().assert_result(1, 1, 2, 2)

        Backpressure: pulls the current iterable only as far as requested. Unfused, the upstream is
        prefetched 128 elements ahead (replenished at 75%); fused with a synchronous source, the
        next upstream element is pulled when the current iterable is exhausted.
        Scheduler: none; ``mapper`` runs, and the iterables are pulled, on the thread that drains: the
        upstream's or the requesting one.
        """
        return _i_flat_map_iterable(self, mapper)

    @overload
    def scan(self, accumulator: Callable[[T, T], T]) -> Flowable[T]: ...

    @overload
    def scan(self, accumulator: Callable[[R, T], R], seed: R) -> Flowable[R]: ...

    def scan(self, accumulator: Callable[[Any, T], Any], seed: Any = NOTSET) -> Flowable[Any]:
        """Emit the running fold: with a ``seed``, the seed first, then each accumulated value.

        Example::

            Flowable.just(1, 2, 3).scan(lambda a, b: a + b).test().assert_result(1, 3, 6)
            Flowable.just(1, 2).scan(lambda a, b: a + b, seed=0).test().assert_result(0, 1, 3)

        Backpressure: passes requests through (the seed uses one unit of demand).
        Scheduler: none; ``accumulator`` runs, and the running values go out, on the upstream's thread.
        """
        return _i_scan(self, accumulator, seed)

    @overload
    def buffer(self, count: int, skip: int | None = None) -> Flowable[list[T]]: ...

    @overload
    def buffer(self, boundary: Publisher[Any], /) -> Flowable[list[T]]: ...

    @overload
    def buffer(
        self, openings: Publisher[U], closing_selector: Callable[[U], Publisher[Any]], /
    ) -> Flowable[list[T]]: ...

    def buffer(
        self, count: int | Publisher[Any], skip: int | Callable[[Any], Publisher[Any]] | None = None
    ) -> Flowable[list[T]]:
        """Emit lists of ``count`` elements, starting a new list every ``skip`` elements
        (default ``skip = count``: consecutive, non-overlapping lists). The last list may be short.

        Given a Publisher ``boundary`` instead (RxJava's ``buffer(Publisher)``): emit the list
        collected so far at each of its elements (an empty list too); when the source or the
        boundary completes, emit the last list (possibly empty) and complete.

        Given ``openings`` and ``closing_selector`` (RxJava's ``buffer(Publisher, Function)``):
        each element of ``openings`` opens a list, closed (and emitted) by the first signal of
        ``closing_selector(that element)``; lists may overlap; open lists are emitted when the
        source completes.

        Example::

            Flowable.range(0, 5).buffer(2).test().assert_result([0, 1], [2, 3], [4])
            ts = TestScheduler(); tp = TestPublisher.create()
            sub = Flowable.from_publisher(tp).buffer(Flowable.interval(1.0, scheduler=ts)).test()
            tp.next(1, 2); ts.advance_by(1); tp.next(3); tp.complete(); sub.assert_result([1, 2], [3])
            tp = TestPublisher.create(); opens = TestPublisher.create(); close = TestPublisher.create()
            sub = Flowable.from_publisher(tp).buffer(opens, lambda o: close).test()
            tp.next(1); opens.next(0); tp.next(2, 3); close.next(0); sub.assert_values([2, 3])

        Backpressure: a request for n lists asks upstream for about n * skip elements. With a
        boundary, the source and the boundary are requested unbounded (RxJava 3); a boundary signal
        that finds no demand signals ``MissingBackpressureError``; the last list waits for demand.
        With openings, everything is requested unbounded and closed lists wait for demand.
        Scheduler: none; lists go out on the upstream's thread (a list held at completion, on the thread
        that requests it), or the boundary's (the closing Publisher's).
        """
        return _i_buffer(self, count, skip)

    def take(self, count: int | None = None, *, seconds: float | None = None, scheduler: Scheduler | None = None) -> Flowable[T]:
        """Emit at most the first ``count`` elements, then cancel the upstream and complete; or,
        with ``seconds=``, emit for that long (timed take, see :meth:`take_for`).

        Example::

            Flowable.range(0, 100).take(3).test().assert_result(0, 1, 2)
            Flowable.interval(0.1).take(seconds=1.0)   # about 10 elements

        Backpressure: never requests more than ``count`` in total from upstream.
        Scheduler: none for a count (signals stay on the upstream's thread); with ``seconds=`` the
        completion comes from a worker of ``scheduler`` (default: computation), see :meth:`take_for`.
        """
        if seconds is not None:
            if count is not None:
                raise TypeError("take(): give a count or seconds=..., not both")
            return self.take_for(seconds, scheduler)
        if count is None:
            raise TypeError("take(): give a count (or seconds=... for a timed take)")
        return _i_take(self, count)

    def take_last(self, count: int) -> Flowable[T]:
        """Emit the last ``count`` elements after the upstream completes.

        Example::

            Flowable.range(0, 5).take_last(2).test().assert_result(3, 4)

        Backpressure: consumes upstream unbounded; emits the kept tail as requested (post-complete).
        Scheduler: none; the tail goes out on the thread of the upstream's completion, or on the thread
        that requests it later.
        """
        return _i_take_last(self, count)

    def take_while(self, predicate: Callable[[T], object]) -> Flowable[T]:
        """Emit elements while ``predicate`` holds; complete at the first that fails it.

        Example::

            Flowable.range(0, 10).take_while(lambda x: x < 3).test().assert_result(0, 1, 2)

        Backpressure: passes requests through; cancels the upstream at the first element that fails.
        Scheduler: none; ``predicate`` runs, and elements go out, on the upstream's thread.
        """
        return _i_take_while(self, predicate)

    def take_until(self, stop: Callable[[T], object] | Publisher[Any]) -> Flowable[T]:
        """With a predicate: emit elements up to and including the first for which ``stop`` holds,
        then complete. With a Publisher: emit until it signals an element or completes.

        Example::

            Flowable.range(0, 10).take_until(lambda x: x == 2).test().assert_result(0, 1, 2)

        Backpressure: passes requests through; a Publisher ``stop`` is requested unbounded (its first
        element or its completion ends the stream).
        Scheduler: none; elements go out on the upstream's thread; the completion caused by a Publisher
        ``stop`` on that Publisher's thread (serialized).
        """
        return _i_take_until(self, stop)

    def skip(self, count: int | None = None, *, seconds: float | None = None, scheduler: Scheduler | None = None) -> Flowable[T]:
        """Drop the first ``count`` elements; or, with ``seconds=``, those that arrive during the
        first ``seconds`` (timed skip, see :meth:`skip_for`).

        Example::

            Flowable.range(0, 5).skip(3).test().assert_result(3, 4)

        Backpressure: asks upstream for ``count`` extra elements once.
        Scheduler: none for a count (signals stay on the upstream's thread); with ``seconds=`` the
        window is timed on a worker of ``scheduler`` (default: computation), see :meth:`skip_for`.
        """
        if seconds is not None:
            if count is not None:
                raise TypeError("skip(): give a count or seconds=..., not both")
            return self.skip_for(seconds, scheduler)
        if count is None:
            raise TypeError("skip(): give a count (or seconds=... for a timed skip)")
        return _i_skip(self, count)

    def skip_last(self, count: int) -> Flowable[T]:
        """Drop the last ``count`` elements (each element is emitted once ``count`` newer ones arrived).

        Example::

            Flowable.range(0, 5).skip_last(2).test().assert_result(0, 1, 2)

        Backpressure: asks the upstream for ``count`` extra elements once, up front; then every request
        passes straight through (one element in, one out).
        Scheduler: none; elements go out on the upstream's thread.
        """
        return _i_skip_last(self, count)

    def skip_while(self, predicate: Callable[[T], object]) -> Flowable[T]:
        """Drop elements while ``predicate`` holds, then emit everything.

        Example::

            Flowable.range(0, 5).skip_while(lambda x: x < 3).test().assert_result(3, 4)

        Backpressure: passes requests through and asks upstream for one more per dropped element.
        Scheduler: none; ``predicate`` runs, and elements go out, on the upstream's thread.
        """
        return _i_skip_while(self, predicate)

    def distinct(self, key_fn: Callable[[T], Hashable] | None = None) -> Flowable[T]:
        """Drop elements whose key (default: the element) was seen before.

        Example::

            Flowable.just(1, 2, 1, 3).distinct().test().assert_result(1, 2, 3)

        Memory: keeps every key seen.

        Backpressure: passes requests through and asks upstream for one more per dropped element.
        Scheduler: none; ``key_fn`` runs, and elements go out, on the upstream's thread.
        """
        return _i_distinct(self, key_fn)

    def distinct_until_changed(
        self,
        key_fn: Callable[[T], Any] | None = None,
        comparer: Callable[[Any, Any], bool] | None = None,
    ) -> Flowable[T]:
        """Drop elements equal (by key, or by ``comparer(previous, current)``) to their predecessor.

        Example::

            Flowable.just(1, 1, 2, 1).distinct_until_changed().test().assert_result(1, 2, 1)

        Backpressure: passes requests through and asks upstream for one more per dropped element.
        Scheduler: none; ``key_fn``/``comparer`` run, and elements go out, on the upstream's thread.
        """
        return _i_distinct_until_changed(self, key_fn, comparer)

    def element_at(self, index: int, default: T | Any = NOTSET) -> Flowable[T]:
        """Emit only the element at ``index`` (0-based); if there is none, ``default`` when given,
        else complete empty.

        Example::

            Flowable.range(0, 5).element_at(2).test().assert_result(2)

        Backpressure: consumes the upstream unbounded and cancels it once the element is found; the
        element waits for a request.
        Scheduler: none; the element goes out on the upstream's thread, or on the requesting thread if
        the request comes later.
        """
        return _i_element_at(self, index, default)

    def element_at_or_error(self, index: int) -> Flowable[T]:
        """Like :meth:`element_at`, but signal ``NoSuchElementError`` when there is no such element.

        Example::

            Flowable.range(0, 5).element_at_or_error(2).test().assert_result(2)
            Flowable.range(0, 2).element_at_or_error(5).test().assert_error(NoSuchElementError)

        Backpressure: consumes the upstream unbounded and cancels it once the element is found; the
        element waits for a request.
        Scheduler: none; the element goes out on the upstream's thread, or on the requesting thread if
        the request comes later.
        """
        return _i_element_at_or_error(self, index)

    def first(self, default: T | Any = NOTSET) -> Flowable[T]:
        """Emit the first element, then cancel the upstream. If the stream is empty: ``default``
        when given, else ``NoSuchElementError``.

        Example::

            Flowable.range(3, 5).first().test().assert_result(3)
            Flowable.empty().first(default=0).test().assert_result(0)

        Backpressure: consumes the upstream unbounded and cancels it at the first element; the element
        waits for a request.
        Scheduler: none; the element goes out on the upstream's thread, or on the requesting thread if
        the request comes later.
        """
        return _i_first(self, default)

    def first_element(self) -> Flowable[T]:
        """Emit the first element if there is one, else complete empty.

        Example::

            Flowable.range(3, 5).first_element().test().assert_result(3)
            Flowable.empty().first_element().test().assert_result()

        Backpressure: consumes the upstream unbounded and cancels it at the first element; the element
        waits for a request.
        Scheduler: none; the element goes out on the upstream's thread, or on the requesting thread if
        the request comes later.
        """
        return self.element_at(0)

    def last(self, default: T | Any = NOTSET) -> Flowable[T]:
        """Emit the last element after completion. If the stream is empty: ``default`` when given,
        else ``NoSuchElementError``.

        Example::

            Flowable.range(3, 5).last().test().assert_result(7)

        Backpressure: consumes upstream unbounded; emits when requested.
        Scheduler: none; the element goes out on the thread of the upstream's completion, or on the
        requesting thread if the request comes later.
        """
        return _i_last(self, default)

    def ignore_elements(self) -> Flowable[T]:
        """Drop every element; pass on only the terminal signal.

        Example::

            Flowable.range(0, 5).ignore_elements().test().assert_result()

        Backpressure: requests the upstream unbounded (nothing is emitted, so nothing needs demand).
        Scheduler: none; the terminal signal goes out on the upstream's thread.
        """
        return _i_ignore_elements(self)

    def default_if_empty(self, default: T) -> Flowable[T]:
        """Emit ``default`` if the upstream completes without elements.

        Example::

            Flowable.empty().default_if_empty(0).test().assert_result(0)

        Backpressure: passes requests through; the default waits for a request.
        Scheduler: none; signals stay on the upstream's thread (the default goes out on the completing
        or the requesting thread).
        """
        return _i_default_if_empty(self, default)

    def switch_if_empty(self, other: Publisher[T]) -> Flowable[T]:
        """Continue with ``other`` if the upstream completes without elements.

        Example::

            Flowable.empty().switch_if_empty(Flowable.just(1, 2)).test().assert_result(1, 2)

        Backpressure: unfulfilled demand carries over to ``other``.
        Scheduler: none; ``other`` is subscribed on the thread where the upstream completed.
        """
        return _i_switch_if_empty(self, other)

    def start_with(self, *items: Any) -> Flowable[T]:
        """Emit ``items`` first (or, given one Publisher, its elements first), then this Flowable.

        Example::

            Flowable.just(3).start_with(1, 2).test().assert_result(1, 2, 3)

        Backpressure: as :meth:`concat`: demand the items did not use carries over to this Flowable.
        Scheduler: none; the items go out on the requesting thread, then this Flowable's elements on its
        own thread.
        """
        return _i_start_with(self, *items)

    def concat_with(self, other: Publisher[T]) -> Flowable[T]:
        """Emit this Flowable's elements, then ``other``'s.

        Example::

            Flowable.just(1).concat_with(Flowable.just(2)).test().assert_result(1, 2)

        Backpressure: as :meth:`concat`: demand this Flowable did not fulfil carries over to ``other``.
        Scheduler: none; ``other`` is subscribed on the thread where this Flowable completed.
        """
        return _i_concat_with(self, other)

    def merge_with(self, other: Publisher[T], delay_error: bool = False) -> Flowable[T]:
        """Merge this Flowable with ``other`` (see :meth:`merge`).

        Example::

            Flowable.just(1).merge_with(Flowable.just(2)).test().assert_result(1, 2)

        Backpressure: as :meth:`merge`: each of the two is prefetched 128 at a time (replenished at
        75%); downstream demand is honoured.
        Scheduler: none; elements go out serially, on the thread of the source that signals them, or on
        the requesting thread when queued elements drain.
        """
        return Flowable.merge(self, other, delay_error=delay_error)

    @overload
    def zip_with(self, other: Publisher[U], zipper: None = None) -> Flowable[tuple[T, U]]: ...

    @overload
    def zip_with(self, other: Publisher[U], zipper: Callable[[T, U], R]) -> Flowable[R]: ...

    def zip_with(self, other: Publisher[U], zipper: Callable[[T, U], R] | None = None) -> Flowable[Any]:
        """Zip this Flowable with ``other`` (see :meth:`zip`).

        Example::

            Flowable.just(1, 2).zip_with(Flowable.just("a", "b")).test().assert_result((1, "a"), (2, "b"))
            Flowable.just(1, 2).zip_with(Flowable.just(10, 20), lambda a, b: a + b).test().assert_result(11, 22)

        Backpressure: as :meth:`zip`: each side is prefetched 128 at a time (replenished at 75%).
        Scheduler: none; a row goes out, serially, on the thread of the source whose element completed
        it, or on the requesting thread.
        """
        if zipper is None:
            return Flowable.zip(self, other)
        return Flowable.zip(self, other, zipper)

    def concat_map(self, mapper: Callable[[T], Publisher[R]], prefetch: int = 2) -> Flowable[R]:
        """Map each element to a Publisher and emit their elements in order, one inner at a time.

        Example::

            Flowable.range(0, 3).concat_map(lambda x: Flowable.just(x, x)).test().assert_result(0, 0, 1, 1, 2, 2)

        Backpressure: prefetches ``prefetch`` upstream elements; demand carries across inners.
        ``Flowable.just(x)``/``empty()`` inner results take a shortcut with no inner subscription.
        Scheduler: none; ``mapper`` runs in the drain, on the thread that delivered the outer element,
        completed the previous inner or requested; elements arrive on each inner's thread.
        """
        return _i_concat_map(self, mapper, prefetch)

    def flat_map(
        self,
        mapper: Callable[[T], Publisher[R]],
        max_concurrency: int | None = DEFAULT_PREFETCH,
        prefetch: int = DEFAULT_PREFETCH,
        delay_error: bool = False,
    ) -> Flowable[R]:
        """Map each element to a Publisher and merge their elements as they arrive.

        Example::

            Flowable.range(0, 3).flat_map(lambda x: Flowable.just(x, x * 10)).to_list().blocking_first()

        Backpressure: the outer source is asked for ``max_concurrency`` elements ahead (``None``:
        unbounded) and one more per finished inner; each inner is prefetched with ``prefetch``
        (replenished at 75%); downstream demand is honoured exactly. ``Flowable.just(x)`` results
        are emitted directly and ``empty()`` ones skipped (no inner subscription).
        Scheduler: elements are emitted on whichever thread an inner signals from (serially).
        Errors: the first error cancels everything, unless ``delay_error``: then all errors are
        signalled at the end (several as an ExceptionGroup).
        """
        return _i_flat_map(self, mapper, max_concurrency, prefetch, delay_error)

    def switch_map(self, mapper: Callable[[T], Publisher[R]], prefetch: int = DEFAULT_PREFETCH, delay_error: bool = False) -> Flowable[R]:
        """Map each element to a Publisher and mirror only the most recent one (a new element
        cancels the previous inner).

        Example::

            queries.switch_map(lambda q: search(q))   # only the latest query's results

        Backpressure: demand carries over to the next inner; each inner is prefetched with
        ``prefetch``. The outer is consumed unbounded. Completes after the outer and the last
        inner complete. ``just(x)`` results skip the inner subscription.
        Scheduler: none; ``mapper`` runs on the outer source's thread; elements go out serially on the
        current inner's thread (or on the requesting thread).
        """
        return _i_switch_map(self, mapper, prefetch, delay_error)

    def concat_map_eager(
        self, mapper: Callable[[T], Publisher[R]], max_concurrency: int = DEFAULT_PREFETCH, prefetch: int = DEFAULT_PREFETCH
    ) -> Flowable[R]:
        """Subscribe to up to ``max_concurrency`` inners at once, emit them in outer order.

        Example::

            Flowable.range(0, 3).concat_map_eager(lambda x: fetch(x).subscribe_on(schedulers.io()))

        Backpressure: the outer is asked ``max_concurrency`` ahead and one more per finished inner;
        each inner is buffered up to ``prefetch``.
        Scheduler: none; the inners run on their own threads; their elements go out in order, serially,
        on whichever thread drains (an inner's or the requesting one).
        """
        return _i_concat_map_eager(self, mapper, max_concurrency, prefetch)

    @overload
    def with_latest_from(self, other1: Publisher[T1], /) -> Flowable[tuple[T, T1]]: ...

    @overload
    def with_latest_from(self, other1: Publisher[T1], combiner: Callable[[T, T1], R], /) -> Flowable[R]: ...

    @overload
    def with_latest_from(self, other1: Publisher[T1], other2: Publisher[T2], /) -> Flowable[tuple[T, T1, T2]]: ...

    @overload
    def with_latest_from(self, other1: Publisher[T1], other2: Publisher[T2], combiner: Callable[[T, T1, T2], R], /) -> Flowable[R]: ...

    @overload
    def with_latest_from(self, other1: Publisher[T1], other2: Publisher[T2], other3: Publisher[T3], /) -> Flowable[tuple[T, T1, T2, T3]]: ...

    @overload
    def with_latest_from(self, other1: Publisher[T1], other2: Publisher[T2], other3: Publisher[T3], combiner: Callable[[T, T1, T2, T3], R], /) -> Flowable[R]: ...

    @overload
    def with_latest_from(
        self, others: Iterable[Publisher[Any]], combiner: Callable[..., R], /
    ) -> Flowable[R]: ...

    @overload
    def with_latest_from(self, others: Iterable[Publisher[Any]], /) -> Flowable[tuple[Any, ...]]: ...

    @overload
    def with_latest_from(
        self,
        other1: Publisher[Any],
        other2: Publisher[Any],
        other3: Publisher[Any],
        other4: Publisher[Any],
        /,
        *more: Any,
    ) -> Flowable[Any]: ...

    def with_latest_from(self, *others: Any) -> Flowable[Any]:
        """Combine each element with the latest value of every other Publisher (a trailing
        callable combines; otherwise tuples). Elements arriving before every other has a value are
        dropped.

        Example::

            clicks.with_latest_from(positions, lambda click, pos: (click, pos))

        Backpressure: passes the main requests through; the others are consumed unbounded.
        Scheduler: none; rows go out on the main source's thread; the others may signal on any thread.
        """
        return _i_with_latest_from(self, *others)

    def skip_until(self, other: Publisher[Any]) -> Flowable[T]:
        """Drop elements until ``other`` emits an element or completes.

        Example::

            events.skip_until(Flowable.timer(1.0))

        Backpressure: passes the main requests through and asks upstream for one more per dropped
        element; ``other`` is asked for one element and cancelled once it signals.
        Scheduler: none; elements go out on the main source's thread; ``other`` may signal on any
        thread.
        """
        return _i_skip_until(self, other)

    def amb_with(self, other: Publisher[T]) -> Flowable[T]:
        """Mirror whichever of this Flowable and ``other`` signals first (see :meth:`amb`).

        Example::

            Flowable.never().amb_with(Flowable.just(1, 2)).test().assert_result(1, 2)

        Backpressure: as :meth:`amb`: requests made before a winner is known go to both; then the
        winner's own.
        Scheduler: none; signals arrive on the winning source's thread.
        """
        return Flowable.amb(self, other)

    def parallel(self, rails: int | None = None, prefetch: int = DEFAULT_PREFETCH) -> ParallelFlowable[T]:
        """Split into ``rails`` parallel rails (default ``os.cpu_count()``) for per-rail stages on
        a Scheduler (``run_on``), then ``sequential()`` merges them.

        Example::

            Flowable.range(0, 100).parallel(4).run_on(schedulers.io()).map(fetch).sequential()

        Backpressure: the source is prefetched with ``prefetch``; elements go round-robin to
        rails with demand.
        Scheduler: none for ``parallel`` itself (the source is consumed on its own thread);
        ``run_on(scheduler)`` moves each rail's stages to a worker of that scheduler; ``sequential()``
        merges the rails as they signal.
        """
        return _i_parallel(self, rails, prefetch)

    # ------------------------------------------------------------------------------------------
    # Aggregate (single-valued results: consume upstream unbounded, emit when requested)

    @overload
    def reduce(self, reducer: Callable[[T, T], T]) -> Flowable[T]: ...

    @overload
    def reduce(self, reducer: Callable[[R, T], R], seed: R) -> Flowable[R]: ...

    def reduce(self, reducer: Callable[[Any, T], Any], seed: Any = NOTSET) -> Flowable[Any]:
        """Fold all elements into one value, emitted on completion. Without a seed an empty stream
        completes empty.

        Example::

            Flowable.range(1, 4).reduce(lambda a, b: a + b).test().assert_result(10)
            Flowable.empty().reduce(lambda a, b: a + b, seed=0).test().assert_result(0)

        Backpressure: consumes the upstream unbounded; the one result waits for a request.
        Scheduler: none; ``reducer`` runs on the upstream's thread; the result goes out on the thread of
        the upstream's completion, or on the requesting thread if the request comes later.
        """
        return _i_reduce(self, reducer, seed)

    def collect(self, supplier: Callable[[], U], accumulator: Callable[[U, T], Any]) -> Flowable[U]:
        """Collect into a container made by ``supplier``, emitted on completion.

        Example::

            Flowable.just(1, 2).collect(set, set.add).test().assert_result({1, 2})

        Backpressure: consumes the upstream unbounded; the one result waits for a request.
        Scheduler: none; ``supplier`` runs on the subscribing thread, ``accumulator`` on the upstream's
        thread; the result goes out on the thread of the upstream's completion, or on the requesting
        thread if the request comes later.
        """
        return _i_collect(self, supplier, accumulator)

    def to_list(self) -> Flowable[list[T]]:
        """Collect every element into one list, emitted on completion.

        Example::

            Flowable.just(1, 2).to_list().test().assert_result([1, 2])

        Backpressure: consumes the upstream unbounded; the one result waits for a request.
        Scheduler: none; the result goes out on the thread of the upstream's completion, or on the
        requesting thread if the request comes later.
        """
        return _i_to_list(self)

    @overload
    def to_dict(self, key_fn: Callable[[T], K], value_fn: None = None) -> Flowable[dict[K, T]]: ...

    @overload
    def to_dict(self, key_fn: Callable[[T], K], value_fn: Callable[[T], V]) -> Flowable[dict[K, V]]: ...

    def to_dict(self, key_fn: Callable[[T], K], value_fn: Callable[[T], V] | None = None) -> Flowable[dict[K, Any]]:
        """Collect into a dict keyed by ``key_fn`` (later elements win), emitted on completion.

        Example::

            Flowable.just("a", "bb").to_dict(len).test().assert_result({1: "a", 2: "bb"})

        Backpressure: consumes the upstream unbounded; the one result waits for a request.
        Scheduler: none; the result goes out on the thread of the upstream's completion, or on the
        requesting thread if the request comes later.
        """
        return _i_to_dict(self, key_fn, value_fn)

    def count(self) -> Flowable[int]:
        """Emit the number of elements on completion.

        Example::

            Flowable.range(0, 5).count().test().assert_result(5)

        Backpressure: consumes the upstream unbounded; the one result waits for a request.
        Scheduler: none; the result goes out on the thread of the upstream's completion, or on the
        requesting thread if the request comes later.
        """
        return _i_count(self)

    def all(self, predicate: Callable[[T], object]) -> Flowable[bool]:
        """Emit whether every element satisfies ``predicate`` (stops at the first that does not).

        Example::

            Flowable.just(2, 4).all(lambda x: x % 2 == 0).test().assert_result(True)

        Backpressure: consumes the upstream unbounded and cancels it at the first element that fails
        ``predicate``; the result waits for a request.
        Scheduler: none; the result goes out on the upstream's thread (that of the deciding element, or
        of the completion), or on the requesting thread if the request comes later.
        """
        return _i_all_(self, predicate)

    def any(self, predicate: Callable[[T], object]) -> Flowable[bool]:
        """Emit whether some element satisfies ``predicate`` (stops at the first that does).

        Example::

            Flowable.just(1, 2).any(lambda x: x > 1).test().assert_result(True)

        Backpressure: consumes the upstream unbounded and cancels it at the first element that satisfies
        ``predicate``; the result waits for a request.
        Scheduler: none; the result goes out on the upstream's thread (that of the deciding element, or
        of the completion), or on the requesting thread if the request comes later.
        """
        return _i_any_(self, predicate)

    def contains(self, item: object) -> Flowable[bool]:
        """Emit whether some element equals ``item``.

        Example::

            Flowable.just(1, 2).contains(2).test().assert_result(True)

        Backpressure: consumes the upstream unbounded and cancels it at the first equal element; the
        result waits for a request.
        Scheduler: none; the result goes out on the upstream's thread (that of the deciding element, or
        of the completion), or on the requesting thread if the request comes later.
        """
        return _i_contains(self, item)

    # ------------------------------------------------------------------------------------------
    # Errors and lifecycle

    def on_error_return(self, fn: Callable[[BaseException], T]) -> Flowable[T]:
        """On error, emit ``fn(error)`` and complete.

        Example::

            Flowable.error(ValueError()).on_error_return(lambda e: -1).test().assert_result(-1)

        Backpressure: the fallback value waits for demand.
        Scheduler: none; ``fn`` runs on the thread of the error; the value goes out there, or on the
        requesting thread if the request comes later.
        """
        return _i_on_error_return(self, fn)

    def on_error_return_item(self, item: T) -> Flowable[T]:
        """On error, emit ``item`` and complete. A ``None`` item is refused at assembly (rule 2.13).

        Example::

            Flowable.error(ValueError()).on_error_return_item(0).test().assert_result(0)

        Backpressure: the item waits for a request (as :meth:`on_error_return`).
        Scheduler: none; the item goes out on the thread of the error, or on the requesting thread if
        the request comes later.
        """
        if item is None:
            raise NoneElementError(
                "on_error_return_item(): the item is None; None is not a valid element (rule 2.13)"
            )
        return self.on_error_return(lambda _e: item)

    def on_error_resume_next(
        self, fallback: Callable[[BaseException], Publisher[T]] | Publisher[T]
    ) -> Flowable[T]:
        """On error, continue with a fallback Publisher (given, or returned by ``fallback(error)``).

        Example::

            Flowable.error(ValueError()).on_error_resume_next(Flowable.just(1)).test().assert_result(1)

        Backpressure: unfulfilled demand carries over to the fallback.
        Scheduler: none; the fallback is subscribed on the thread of the error and signals on its own
        threads.
        """
        return _i_on_error_resume_next(self, fallback)

    def on_error_complete(self, predicate: Callable[[BaseException], object] | None = None) -> Flowable[T]:
        """On error (matching ``predicate`` if given), complete instead.

        Example::

            Flowable.concat(Flowable.just(1), Flowable.error(ValueError())).on_error_complete().test().assert_result(1)

        Backpressure: passes requests through.
        Scheduler: none; the completion goes out on the thread that signalled the error.
        """
        return _i_on_error_complete(self, predicate)

    def retry(
        self,
        times: Any = None,
        predicate: Callable[[BaseException], object] | None = None,
    ) -> Flowable[T]:
        """Resubscribe on error, at most ``times`` times (``None``: forever) and only while
        ``predicate(error)`` holds. Given a policy (``rstreams.retry.Retry.backoff(...)``), retry
        per that policy instead (see :meth:`retry_policy`).

        Example::

            Flowable.defer(flaky).retry(3).test()

        Backpressure: unfulfilled demand carries over. Resubscription is trampolined: a million
        retries never hit the recursion limit.
        Scheduler: none; resubscribes on the thread where the error arrived (trampolined); a policy's
        delays run on its scheduler (see :meth:`retry_policy`).
        """
        if times is not None and not isinstance(times, int):
            from ._retry_policy import RetrySpec

            if isinstance(times, RetrySpec):
                if predicate is not None:
                    raise TypeError("retry(policy): give the predicate to the policy (policy.filter(...))")
                return self.retry_policy(times)
        return _i_retry(self, times, predicate)

    def repeat(self, times: int | None = None) -> Flowable[T]:
        """Resubscribe on completion: ``times`` subscriptions in all (``None``: forever).

        Example::

            Flowable.just(1).repeat(3).test().assert_result(1, 1, 1)

        Backpressure: unfulfilled demand carries over. Trampolined, as ``retry``.
        Scheduler: none; resubscribes on the thread where the source completed (trampolined).
        """
        return _i_repeat(self, times)

    def do_on_next(self, fn: Callable[[T], Any]) -> Flowable[T]:
        """Call ``fn(element)`` before passing each element on (a raising ``fn`` fails the stream).

        Example::

            Flowable.just(1).do_on_next(print).test().assert_result(1)

        Backpressure: passes requests and elements through untouched.
        Scheduler: none; ``fn`` runs on the upstream's thread, before the element goes on.
        """
        return _i_do_on_next(self, fn)

    def do_on_error(self, fn: Callable[[BaseException], Any]) -> Flowable[T]:
        """Call ``fn(error)`` before passing the error on.

        Example::

            Flowable.error(ValueError("x")).do_on_error(print).test().assert_error(ValueError)

        Backpressure: passes requests and elements through untouched.
        Scheduler: none; ``fn`` runs on the thread that signals the error.
        """
        return _i_do_on_error(self, fn)

    def do_on_complete(self, fn: Callable[[], Any]) -> Flowable[T]:
        """Call ``fn()`` before passing completion on.

        Example::

            Flowable.just(1).do_on_complete(lambda: print("done")).test().assert_result(1)

        Backpressure: passes requests and elements through untouched.
        Scheduler: none; ``fn`` runs on the thread that signals the completion.
        """
        return _i_do_on_complete(self, fn)

    def do_on_subscribe(self, fn: Callable[[Subscription], Any]) -> Flowable[T]:
        """Call ``fn(subscription)`` when the upstream subscription arrives.

        Example::

            Flowable.just(1).do_on_subscribe(lambda s: print("subscribed")).test().assert_result(1)

        Backpressure: passes requests and elements through untouched.
        Scheduler: none; ``fn`` runs on the thread where the upstream signals ``on_subscribe`` (the
        subscribing thread, unless ``subscribe_on`` moved it).
        """
        return _i_do_on_subscribe(self, fn)

    def do_on_request(self, fn: Callable[[int], Any]) -> Flowable[T]:
        """Call ``fn(n)`` for each downstream ``request(n)`` (how users debug demand).

        Example::

            Flowable.range(0, 3).do_on_request(print).test(2)   # prints 2

        Backpressure: passes every request through unchanged (after calling ``fn``).
        Scheduler: none; ``fn`` runs on the thread that calls ``request``.
        """
        return _i_do_on_request(self, fn)

    def do_on_cancel(self, fn: Callable[[], Any]) -> Flowable[T]:
        """Call ``fn()`` when the downstream cancels.

        Example::

            Flowable.range(0, 10).do_on_cancel(lambda: print("cancelled")).take(2).test().assert_result(0, 1)

        Backpressure: passes requests and elements through untouched.
        Scheduler: none; ``fn`` runs on the thread that cancels.
        """
        return _i_do_on_cancel(self, fn)

    def do_finally(self, fn: Callable[[], Any]) -> Flowable[T]:
        """Call ``fn()`` exactly once after the stream terminates or is cancelled.

        Example::

            Flowable.just(1).do_finally(lambda: print("done")).test()

        Backpressure: passes requests and elements through untouched.
        Scheduler: none; ``fn`` runs on the thread that terminates the stream or cancels it, whichever
        comes first.
        """
        return _i_do_finally(self, fn)

    def do_on_terminate(self, fn: Callable[[], Any]) -> Flowable[T]:
        """Call ``fn()`` just before ``on_complete`` or ``on_error`` goes downstream (RxJava
        ``doOnTerminate``); not on cancel. A raising ``fn`` fails the stream.

        Example::

            Flowable.just(1).do_on_terminate(lambda: print("ending")).test().assert_result(1)

        Backpressure: passes requests and elements through untouched.
        Scheduler: none; ``fn`` runs on the thread that delivers the terminal signal, just before it.
        """
        return _i_do_on_terminate(self, fn)

    def do_after_terminate(self, fn: Callable[[], Any]) -> Flowable[T]:
        """Call ``fn()`` just after ``on_complete`` or ``on_error`` went downstream (RxJava
        ``doAfterTerminate``); not on cancel. A raising ``fn`` goes to ``rstreams.plugins``.

        Example::

            Flowable.just(1).do_after_terminate(lambda: print("ended")).test().assert_result(1)

        Backpressure: passes requests and elements through untouched.
        Scheduler: none; ``fn`` runs on the thread that delivered the terminal signal.
        """
        return _i_do_after_terminate(self, fn)

    def do_on_each(
        self,
        on_next: Callable[[T], Any] | None = None,
        on_error: Callable[[BaseException], Any] | None = None,
        on_complete: Callable[[], Any] | None = None,
    ) -> Flowable[T]:
        """One callback per signal kind (RxJava ``doOnEach``). A raising ``on_next`` or
        ``on_complete`` callback fails the stream, and ``on_error`` sees that error too.

        Example::

            Flowable.just(1, 2).do_on_each(on_next=print, on_complete=lambda: print("done")).test()

        Backpressure: passes requests and elements through untouched.
        Scheduler: none; each callback runs on the thread that delivers its signal.
        """
        return _i_do_on_each(self, on_next, on_error, on_complete)

    # ------------------------------------------------------------------------------------------
    # Backpressure operators

    def on_backpressure_buffer(
        self,
        capacity: int | None = None,
        on_overflow: BackpressureOverflow = BackpressureOverflow.ERROR,
        on_dropped: Callable[[T], Any] | None = None,
        delay_error: bool = False,
    ) -> Flowable[T]:
        """Buffer elements the downstream has not requested yet (unbounded when ``capacity`` is None).

        Example::

            fast_source.on_backpressure_buffer(1000, BackpressureOverflow.DROP_OLDEST)

        Backpressure: requests unbounded from upstream; on a full buffer applies ``on_overflow``:
        ERROR (cancel upstream, signal ``MissingBackpressureError``), DROP_OLDEST or DROP_LATEST
        (``on_dropped`` is called with the dropped element).
        Errors: signalled at once, discarding what is buffered (RxJava's default); with
        ``delay_error=True`` they wait until the buffered elements have been delivered.
        Scheduler: none; elements go out on the upstream's thread while there is demand, and otherwise
        later, on the thread that requests them. ``on_dropped`` runs on the upstream's thread.
        """
        return _i_on_backpressure_buffer(self, capacity, on_overflow, on_dropped, delay_error)

    def on_backpressure_drop(self, on_drop: Callable[[T], Any] | None = None) -> Flowable[T]:
        """Drop elements that arrive without downstream demand (``on_drop`` sees each one).

        Example::

            dropped = []
            tp = TestPublisher.create()
            sub = Flowable.from_publisher(tp).on_backpressure_drop(dropped.append).test(1)
            tp.next(1, 2, 3); sub.assert_values(1); assert dropped == [2, 3]

        Backpressure: requests unbounded from upstream.
        Scheduler: none; ``on_drop`` runs, and elements go out, on the upstream's thread.
        """
        return _i_on_backpressure_drop(self, on_drop)

    def on_backpressure_latest(self) -> Flowable[T]:
        """Keep only the latest element that arrived without demand; emit it when requested.

        Example::

            tp = TestPublisher.create()
            sub = Flowable.from_publisher(tp).on_backpressure_latest().test(1)
            tp.next(1, 2, 3); sub.assert_values(1)
            sub.request(1); sub.assert_values(1, 3)     # 2 was replaced by 3

        Backpressure: requests unbounded from upstream.
        Scheduler: none; elements go out on the upstream's thread while there is demand, and otherwise
        later, on the thread that requests them.
        """
        return _i_on_backpressure_latest(self)

    def rebatch_requests(self, n: int) -> Flowable[T]:
        """Request from upstream in batches of ``n`` (replenishing at 75%), whatever downstream asks.

        Example::

            source.rebatch_requests(128)   # upstream sees request(128), then request(96), ...

        Backpressure: asks the upstream for ``n``, then ``n - n // 4`` each time that many were emitted,
        whatever the downstream requests; elements wait in a queue of at most ``n`` for downstream
        demand.
        Scheduler: none; elements go out on the upstream's thread while there is demand, and otherwise
        later, on the thread that requests them.
        """
        return _i_rebatch_requests(self, n)

    # ------------------------------------------------------------------------------------------
    # Asynchronous boundaries

    def subscribe_on(self, scheduler: Scheduler, request_on: bool = True) -> Flowable[T]:
        """Subscribe to this Flowable on a worker of ``scheduler``.

        Example::

            Flowable.range(0, 5).subscribe_on(schedulers.io()).blocking_subscribe(print)

        Backpressure: passes requests through (deferred until the upstream exists).
        Scheduler: subscription, and (``request_on=True``) requests from other threads, run on the
        worker; a synchronous source therefore emits on that worker. On ``from_callable(fn)`` the
        two become one publisher: ``fn`` runs as one task on the worker and its value is emitted
        there (the idiom for blocking calls: ``flat_map(lambda x: Flowable.from_callable(lambda:
        fetch(x)).subscribe_on(schedulers.io()), max_concurrency=16)``).
        """
        return _i_subscribe_on(self, scheduler, request_on)

    def observe_on(self, scheduler: Scheduler, prefetch: int = DEFAULT_PREFETCH, delay_error: bool = False) -> Flowable[T]:
        """Deliver signals on a worker of ``scheduler`` through a bounded queue.

        Example::

            Flowable.range(0, 5).observe_on(schedulers.single()).blocking_subscribe(print)

        Backpressure: requests ``prefetch`` upfront, replenishes at 75%; downstream demand is
        honoured. An error cuts ahead of queued elements unless ``delay_error``.
        Scheduler: ``on_next``/``on_error``/``on_complete`` run on the worker, in batches.
        """
        return _i_observe_on(self, scheduler, prefetch, delay_error)

    # ------------------------------------------------------------------------------------------
    # Multicasting

    @overload
    def publish(self) -> ConnectableFlowable[T]: ...

    @overload
    def publish(self, selector: Callable[[Flowable[T]], Publisher[R]], prefetch: int = DEFAULT_PREFETCH) -> Flowable[R]: ...

    def publish(
        self, selector: Callable[[Flowable[T]], Publisher[R]] | None = None, prefetch: int = DEFAULT_PREFETCH
    ) -> ConnectableFlowable[T] | Flowable[R]:
        """Share one subscription to this Flowable among several subscribers, starting on ``connect()``.

        Example::

            cf = Flowable.range(0, 3).publish()
            a, b = cf.test(), cf.test()
            cf.connect()
            a.assert_result(0, 1, 2); b.assert_result(0, 1, 2)
            Flowable.range(0, 3).publish(lambda f: f.zip_with(f.skip(1))).test().assert_result((0, 1), (1, 2))

        ``connect()`` returns a Disposable that disconnects (cancels the upstream);
        ``ref_count(n=1)`` connects at the n-th subscriber and disconnects when the last one
        cancels; ``auto_connect(n=1)`` connects at the n-th subscriber and never disconnects.

        With ``selector`` (RxJava's ``publish(Function, prefetch)``) it returns a plain Flowable:
        each subscription runs ``selector`` over a fresh shared view of this Flowable (subscribed
        once however often the view is used) and emits what the selector's Publisher emits; the
        source is subscribed after that Publisher, and cancelled when it terminates or the
        downstream cancels.

        Backpressure: lockstep: an item is emitted only when every current subscriber has
        requested it, so the slowest subscriber paces the others; the upstream is prefetched 128
        (with ``selector``: ``prefetch``) at a time and replenished at 75%. Items wait while there
        are no subscribers.

        Scheduler: the upstream is subscribed on the thread that connects (with ``selector``: the
        subscribing thread).
        """
        if selector is None:
            if prefetch != DEFAULT_PREFETCH:
                raise ValueError("publish(): prefetch applies only with a selector (publish() prefetches 128)")
            return _i_publish(self)
        return self._publish_selector(selector, prefetch)

    def replay(self, n: int | None = None) -> ConnectableFlowable[T]:
        """Like ``publish()``, but each subscriber first receives the retained items (all of them,
        or the last ``n``), at its own pace.

        Example::

            cf = Flowable.range(0, 5).replay(2)
            cf.connect()
            first = cf.test()              # requests unbounded: the upstream runs
            first.assert_result(0, 1, 2, 3, 4)
            cf.test().assert_result(3, 4)  # a late subscriber gets the last two

        Backpressure: each subscriber's demand is honoured separately (a shared buffer with
        per-subscriber cursors); the upstream is asked for as many items as the subscriber that
        has requested the most (RxJava), so nothing runs ahead of every subscriber's demand.

        Scheduler: the upstream is subscribed on the thread that connects.
        """
        return _i_replay(self, n)

    def share(self) -> Flowable[T]:
        """``publish().ref_count()``: one upstream subscription while there are subscribers.

        Example::

            shared = Flowable.range(0, 3).share()
            shared.test().assert_result(0, 1, 2)

        Backpressure: lockstep, as ``publish()``. The upstream is subscribed by the first
        subscriber, cancelled when the last one cancels, and subscribed again by a later one.

        Scheduler: the upstream is subscribed on the thread of the first subscriber.
        """
        return _i_share(self)

    def cache(self) -> Flowable[T]:
        """Subscribe to this Flowable once, at the first subscriber, and replay everything to every
        subscriber; never disconnect (cancelling subscribers do not cancel the upstream).

        Example::

            cached = Flowable.range(0, 3).cache()
            cached.test().assert_result(0, 1, 2)
            cached.test().assert_result(0, 1, 2)   # the source ran once

        Backpressure: each subscriber at its own pace; the upstream is requested unbounded.
        Memory: everything is retained.

        Scheduler: the upstream is subscribed on the thread of the first subscriber.
        """
        return _i_cache(self)

    # ------------------------------------------------------------------------------------------
    # Blocking bridges

    def blocking_iterable(self, prefetch: int = DEFAULT_PREFETCH, timeout: float | None = None) -> BlockingIterator[T]:
        """A Python iterator over the elements, prefetching at most ``prefetch`` (replenished once
        75% were consumed). Leaving the loop early (break, exception, ``close()``, or the ``with`` block it can
        be used as) cancels the subscription. ``timeout``: the longest wait, in seconds, for each
        element (and for the end); a longer one cancels the subscription and raises
        ``TimeoutError`` from ``next()`` (a synchronous source runs on the calling thread and is
        not interrupted).

        Example::

            for x in Flowable.range(0, 3).blocking_iterable():
                print(x)
            for line in lines.blocking_iterable(timeout=5.0):   # TimeoutError after 5 s idle
                print(line)

        Backpressure: requests ``prefetch`` up front, then, once at least ``prefetch - prefetch // 4``
        were consumed, what was consumed (a batch from a boundary is consumed whole first, so the
        hand-offs stay ``prefetch`` elements each; RxJava requests exactly 75%, cutting a batch):
        at most ``prefetch`` elements wait in memory.
        Scheduler: ``next()`` blocks the iterating thread; the upstream runs on its own threads (a
        synchronous one on the iterating thread, inside ``next()``).
        """
        return _i_blocking_iterable(self, prefetch, timeout)

    def __iter__(self) -> Iterator[T]:
        return self.blocking_iterable()

    def blocking_first(self, default: T | Any = NOTSET, timeout: float | None = None) -> T:
        """Block until the first element and return it (then cancel). Empty: ``default`` if given,
        else raise ``NoSuchElementError``; an error is raised.

        Example::

            Flowable.range(3, 5).blocking_first()   # 3

        Backpressure: requests unbounded and cancels the upstream at the first element (a fused
        synchronous chain is pulled directly: only the first element is computed).
        Scheduler: none of its own: it blocks the calling thread; a synchronous upstream runs on that
        thread, an asynchronous one on its own threads (``timeout`` bounds the wait for them).
        """
        return _i_blocking_first(self, default, timeout)

    def blocking_last(self, default: T | Any = NOTSET, timeout: float | None = None) -> T:
        """Block until completion and return the last element (rules as :meth:`blocking_first`).

        Example::

            Flowable.range(3, 5).blocking_last()   # 7

        Backpressure: consumes the upstream unbounded.
        Scheduler: none of its own: it blocks the calling thread; a synchronous upstream runs on that
        thread, an asynchronous one on its own threads (``timeout`` bounds the wait for them).
        """
        return _i_blocking_last(self, default, timeout)

    def blocking_single(self, default: T | Any = NOTSET, timeout: float | None = None) -> T:
        """Block until completion and return the only element (RxJava ``blockingSingle``). Empty:
        ``default`` if given, else ``NoSuchElementError``; a second element: ``ValueError`` (the
        source is cancelled there); an error is raised.

        Example::

            Flowable.just(7).blocking_single()   # 7

        Backpressure: asks the upstream for at most two elements (``take(2)``): the second one proves
        there is more than one.
        Scheduler: none of its own: it blocks the calling thread; a synchronous upstream runs on that
        thread, an asynchronous one on its own threads (``timeout`` bounds the wait for them).
        """
        return _i_blocking_single(self, default, timeout)

    def blocking_for_each(
        self, fn: Callable[[T], Any], prefetch: int = DEFAULT_PREFETCH, timeout: float | None = None
    ) -> None:
        """Call ``fn(element)`` on the calling thread for each element, blocking until the stream
        ends (RxJava ``blockingForEach``). A raising ``fn`` cancels the subscription and the
        exception propagates; a stream error is raised. ``timeout``: the longest wait, in seconds,
        for each element (and for the end), as in :meth:`blocking_iterable`; a longer one cancels
        the subscription and raises ``TimeoutError`` (the time ``fn`` takes is not counted; a
        synchronous source runs on the calling thread and is not interrupted). RxJava's
        ``blockingForEach`` has no timeout.

        Example::

            Flowable.range(0, 3).blocking_for_each(print)
            events.blocking_for_each(handle, timeout=5.0)   # TimeoutError after 5 s idle

        Backpressure: requests ``prefetch`` up front, then ``prefetch - prefetch // 4`` each time that
        many were consumed: at most ``prefetch`` elements wait in memory, and a slow ``fn`` slows the
        upstream.
        Scheduler: ``fn`` runs on the calling thread, which blocks until the stream ends; the upstream
        runs on its own threads (a synchronous one on the calling thread).
        """
        _i_blocking_for_each(self, fn, prefetch, timeout)

    def blocking_subscribe(
        self,
        on_next: Callable[[T], Any] | None = None,
        on_error: Callable[[BaseException], Any] | None = None,
        on_complete: Callable[[], Any] | None = None,
    ) -> None:
        """Subscribe and block the calling thread until the stream terminates. Callbacks run on
        the calling thread, so what they raise is raised there (a raising ``on_next`` cancels the
        upstream first, and goes to ``on_error`` when one is given). Without ``on_error``, the
        stream's error is raised.

        Example::

            Flowable.range(0, 3).blocking_subscribe(print)

        Backpressure: requests 128 up front, then 96 each time that many were consumed: a slow
        ``on_next`` slows the upstream.
        Scheduler: the callbacks run on the calling thread, which blocks until the stream ends; the
        upstream runs on its own threads (a synchronous one on the calling thread).
        """
        _i_blocking_subscribe(self, on_next, on_error, on_complete)

    def to_future(self) -> concurrent.futures.Future[T]:
        """A ``concurrent.futures.Future`` of the last element (``NoSuchElementError`` when empty).
        Cancelling the future cancels the subscription.

        Example::

            Flowable.just(1, 2).to_future().result()   # 2

        Backpressure: requests unbounded; the future holds the last element.
        Scheduler: none; the future is completed on the thread of the upstream's last signal;
        ``result()`` blocks the thread that calls it.
        """
        return _i_to_future(self)


# Emitter protocols (implemented in sources/_create.py and sources/_generate.py).
class Emitter(Generic[T]):
    """What ``generate``'s function receives: signal at most one element per call."""

    __slots__ = ()

    def on_next(self, item: T) -> None:
        raise NotImplementedError

    def on_error(self, error: BaseException) -> None:
        raise NotImplementedError

    def on_complete(self) -> None:
        raise NotImplementedError


class FlowableEmitter(Emitter[T]):
    """What ``create``'s function receives: push from any thread (signals are serialized)."""

    __slots__ = ()

    @property
    def requested(self) -> int:
        raise NotImplementedError

    @property
    def is_cancelled(self) -> bool:
        raise NotImplementedError

    def set_cancellable(self, fn: Callable[[], Any]) -> None:
        raise NotImplementedError

    def set_disposable(self, disposable: Any) -> None:
        """Dispose ``disposable`` (anything with ``dispose()``) on cancel or termination (RxJava's
        ``setDisposable``); it replaces, and runs, a previously set cancellable or disposable."""
        raise NotImplementedError

    def try_on_error(self, error: BaseException) -> bool:
        raise NotImplementedError

    def serialize(self) -> FlowableEmitter[T]:
        """An emitter safe to call from several threads (rstreams' emitters always are)."""
        raise NotImplementedError


# The basic sources are used per element by flat_map(lambda x: Flowable.just(x)) and the like: keep
# them one attribute away (imported last: the module needs the Flowable class above).
from .sources import _basic  # noqa: E402
