"""Public test utilities: a recording, rule-checking subscriber and a hand-driven publisher.

Example::

    from rstreams.testing import TestPublisher, TestSubscriber

    tp = TestPublisher[int].create()
    ts = TestSubscriber[int](initial_request=2)
    tp.subscribe(ts)
    tp.next(1, 2).complete()
    ts.assert_result(1, 2).assert_no_violations()
"""

from ._test_publisher import TestPublisher, Violation
from ._test_scheduler import TestScheduler
from ._test_subscriber import TestSubscriber

__all__ = ["TestPublisher", "TestScheduler", "TestSubscriber", "Violation"]
