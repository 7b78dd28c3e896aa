"""Processors: Flowables that are also Subscribers (Reactive Streams Processors, rule 4.1).

RxJava 3 ``processors/`` semantics:

* :class:`PublishProcessor`: live multicast; a subscriber without demand gets MissingBackpressureError.
* :class:`BehaviorProcessor`: Publish plus the latest value for each new subscriber.
* :class:`ReplayProcessor`: replays retained items (all / last n / younger than t) at each subscriber's pace.
* :class:`UnicastProcessor`: one subscriber, unbounded buffer, honours its demand.
* :class:`AsyncProcessor`: the last value on completion.
* :class:`MulticastProcessor`: lockstep multicast with a bounded prefetch (the slowest subscriber paces).

``processor.to_serialized()`` makes the ``on_*`` methods safe to call from several threads.
"""

from ._async import AsyncProcessor
from ._base import FlowableProcessor, SerializedProcessor
from ._behavior import BehaviorProcessor
from ._multicast import MulticastProcessor
from ._publish import PublishProcessor
from ._replay import ReplayProcessor
from ._unicast import UnicastProcessor

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
