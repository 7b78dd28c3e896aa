"""The quickstart: a fused synchronous chain, an aggregate, and a hop across two threads.

    python examples/quickstart.py
"""

from __future__ import annotations

from rstreams import Flowable, schedulers


def main() -> None:
    ts = (
        Flowable.range(0, 1_000)      # RxJava's range(start, count): 1000 ints from 0
        .map(lambda x: x * x)
        .filter(lambda x: x % 3 == 0)
        .take(5)
        .test()                       # a subscribed TestSubscriber
    )
    ts.assert_result(0, 9, 36, 81, 144).assert_no_violations()
    print("squares divisible by 3:", ts.values)

    print("sum of 1, 2, 3:", Flowable.just(1, 2, 3).reduce(lambda a, b: a + b).blocking_first())

    seen: list[int] = []
    (
        Flowable.range(0, 5)
        .subscribe_on(schedulers.io())        # the range runs on an io() thread
        .observe_on(schedulers.single())      # handed over to the single() thread
        .blocking_subscribe(seen.append)      # and to this thread, which blocks until the end
    )
    print("delivered:", seen)


if __name__ == "__main__":
    main()
