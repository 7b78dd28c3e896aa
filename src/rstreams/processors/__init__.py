"""Processors: Flowables that are also Subscribers (Reactive Streams Processors, rule 4.1).

RxJava 3 ``processors/`` semantics:

* :class:`PublishProcessor`: live multicast; a subscriber without demand gets MissingBackpressureError.
* :class:`BehaviorProcessor`: Publish plus the latest value for each new subscriber.
* :class:`ReplayProcessor`: replays retained items (all / last n / younger than t) at each subscriber's pace.
* :class:`UnicastProcessor`: one subscriber, unbounded buffer, honours its demand.
* :class:`AsyncProcessor`: the last value on completion.
* :class:`MulticastProcessor`: lockstep multicast with a bounded prefetch (the slowest subscriber paces).

``processor.to_serialized()`` makes the ``on_*`` methods safe to call from several threads.

As Subscribers, every processor keeps one upstream: a second ``on_subscribe`` while it is active is
cancelled and reported to ``rstreams.plugins`` (rules 2.5, 2.12; RxJava's processors request from
every upstream). To feed one processor from several sources, merge them first:
``Flowable.merge(a, b).subscribe(processor)``. ``on_error`` takes an exception instance: anything else
(``on_error("x")``, an exception class) raises TypeError at the call (rule 2.13), as ``None`` does.

TCK (each class's docstring says why): Unicast and ``Multicast(ref_count=True)`` pass the
IdentityProcessor verification; Publish, Behavior, Replay and Async pass the Publisher verification
"AsPublisher"; every processor passes the Subscriber blackbox verification.
"""

# The processors live in the flowable layer (the multicast operators are built of them); this
# module is their public face: the same classes, under the names users import.
from ..flowable.lowlevel import (
    AsyncProcessor,
    BehaviorProcessor,
    FlowableProcessor,
    MulticastProcessor,
    PublishProcessor,
    ReplayProcessor,
    SerializedProcessor,
    UnicastProcessor,
)

__all__ = [
    "AsyncProcessor",
    "BehaviorProcessor",
    "FlowableProcessor",
    "MulticastProcessor",
    "PublishProcessor",
    "ReplayProcessor",
    "SerializedProcessor",
    "UnicastProcessor",
]
