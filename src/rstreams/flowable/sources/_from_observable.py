"""``from_observable(observable, strategy, capacity, on_overflow)``: a reactivex (RxPY) Observable
as a Flowable, as RxJava's ``Observable.toFlowable(BackpressureStrategy)``.

An Observable pushes without asking, so the caller says what happens to what arrives without
demand; the bridge is :func:`~rstreams.flowable.sources._create.create` with that strategy
(BUFFER, DROP, LATEST, ERROR, MISSING), and a bounded BUFFER is ``create(MISSING)`` followed by
``on_backpressure_buffer(capacity, on_overflow)``. Each subscriber subscribes the Observable anew
(an Observable is cold or hot by itself; ``share()`` it first to subscribe once).

Cancellation: the Observable is piped through ``take_until`` of a per-subscription Subject that
the cancel fires, and its Disposable is disposed. ``take_until`` matters for a synchronous
Observable (``reactivex.range``, ``from_iterable`` on the current-thread scheduler): it emits from
inside ``subscribe`` before any Disposable exists, and the Subject still stops it mid-way (a
``take(3)`` downstream of ``reactivex.range(10**9)`` returns at once). Race guarded: a cancel from
another thread while ``subscribe`` has not returned yet; reactivex's ``SingleAssignmentDisposable``
(locked) disposes the Disposable as soon as it is assigned.

reactivex is optional: it is imported when ``from_observable`` is called.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

from ..._internal.arguments import positive_int_or_none
from .._enums import BackpressureOverflow, BackpressureStrategy
from .._flowable import Flowable, FlowableEmitter
from ._create import create

__all__ = ["from_observable", "require_reactivex"]

T = TypeVar("T")

#: The extra of rstreams that installs reactivex today (it is used by the comparison benchmarks).
EXTRA: Final = "rstreams[bench]"


def require_reactivex(where: str) -> Any:
    """The ``reactivex`` module (RxPY 4+), or an ImportError saying ``where`` needs it."""
    try:
        import reactivex
    except ImportError as e:
        raise ImportError(
            f"{where} needs reactivex (RxPY 4 or later), which is not installed: pip install reactivex "
            f"(or {EXTRA})"
        ) from e
    return reactivex


def from_observable(
    observable: Any,
    strategy: BackpressureStrategy,
    capacity: int | None,
    on_overflow: BackpressureOverflow,
) -> Flowable[Any]:
    rx = require_reactivex("Flowable.from_observable()")
    from reactivex.abc import ObservableBase

    if isinstance(observable, Flowable):
        raise TypeError("from_observable(): got a Flowable; use it directly")
    if not isinstance(observable, ObservableBase):
        hint = ""
        if callable(getattr(observable, "subscribe", None)):
            hint = " (a Reactive Streams Publisher goes through Flowable.from_publisher)"
        raise TypeError(f"from_observable(): expected a reactivex Observable, got {type(observable).__name__}{hint}")
    if not isinstance(strategy, BackpressureStrategy):
        raise TypeError(
            "from_observable(): strategy must be a BackpressureStrategy (BUFFER, DROP, LATEST, ERROR or "
            f"MISSING): an Observable cannot be backpressured, so say what to do with what arrives "
            f"without demand; got {strategy!r}"
        )
    if not isinstance(on_overflow, BackpressureOverflow):
        raise TypeError(f"from_observable(): on_overflow must be a BackpressureOverflow, got {on_overflow!r}")
    if positive_int_or_none("from_observable", "capacity", capacity) is not None:
        if strategy is not BackpressureStrategy.BUFFER:
            raise ValueError(
                f"from_observable(): capacity bounds the BUFFER strategy's buffer; it means nothing with {strategy.name}"
            )
    elif on_overflow is not BackpressureOverflow.ERROR:
        raise ValueError("from_observable(): on_overflow needs a bounded buffer (strategy=BUFFER, capacity=n)")

    from reactivex import operators as ops
    from reactivex.disposable import SingleAssignmentDisposable
    from reactivex.subject import Subject

    def emit(emitter: FlowableEmitter[Any]) -> None:
        stop: Subject[bool] = Subject()
        source: Any = observable  # any ObservableBase: take_until only calls its subscribe
        holder = SingleAssignmentDisposable()

        def cancel() -> None:
            # runs once, on cancel or termination (create's contract)
            stop.on_next(True)
            holder.dispose()

        emitter.set_cancellable(cancel)
        holder.disposable = ops.take_until(stop)(source).subscribe(
            emitter.on_next, emitter.on_error, emitter.on_complete
        )

    del rx
    if capacity is not None:
        return create(emit, BackpressureStrategy.MISSING).on_backpressure_buffer(capacity, on_overflow)
    return create(emit, strategy)
