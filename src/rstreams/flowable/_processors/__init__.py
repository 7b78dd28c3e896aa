"""The processors (Reactive Streams Processors, rule 4.1): Flowables that are also Subscribers.

They live in the flowable layer because they are Flowables and because the multicast operators
are built of them (``publish``/``share``: a MulticastProcessor, ``replay``: a
DemandReplayProcessor, ``cache``: a ReplayProcessor, ``publish(selector)``). The public module is
:mod:`rstreams.processors`, which re-exports the processor classes and documents them.
"""
