"""TCK lines for the Flowables that end a ``ParallelFlowable`` (``_parallel.py``): ``make(n)`` emits
exactly ``n`` elements. Extra verification of the rail joins (``sorted``, ``reduce``,
``to_sorted_list``), of ``sequential_delay_error`` and of the per-rail stages that end in
``sequential()``.

``tests/meta/test_tck_coverage.py`` accepts their ``parallel_`` prefix: they name ParallelFlowable
chains, not Flowable methods."""

from __future__ import annotations

import operator
from typing import Any

from library_publishers import Entry

from rstreams import Flowable, schedulers


def _r(n: int) -> Flowable[int]:
    return Flowable.range(0, n)


def _boom() -> Flowable[Any]:
    return Flowable.error(RuntimeError("boom"))


def _on(n: int, rails: int = 2) -> Any:
    return _r(n).parallel(rails).run_on(schedulers.computation())


def _one_per_rail(n: int) -> Flowable[list[int]]:
    # n rails (at least one) that each get one element (the rails all have unbounded demand, so
    # the round-robin gives each one); the empty rail of n == 0 is filtered out
    return _r(n).parallel(max(n, 1)).collect(list, list.append).sequential().filter(bool)


ENTRIES: dict[str, Entry] = {
    # sorted emits every element, in order, as requested: an n-element Publisher
    "parallel_sorted": Entry(lambda n: _r(n).map(lambda x: n - 1 - x).parallel(2).run_on(schedulers.computation()).sorted(),
                             max_elements=100_000, asynchronous=True,
                             failed=lambda: _boom().parallel(2).run_on(schedulers.computation()).sorted()),
    "parallel_sorted_same_thread": Entry(lambda n: _r(n).parallel(3).sorted(reverse=True), max_elements=100_000,
                                         failed=lambda: _boom().parallel(3).sorted()),
    # single-valued joins
    "parallel_reduce": Entry(lambda n: _on(10).reduce(operator.add), max_elements=1, asynchronous=True,
                             failed=lambda: _boom().parallel(2).run_on(schedulers.computation()).reduce(operator.add)),
    "parallel_to_sorted_list": Entry(lambda n: _on(10).to_sorted_list(), max_elements=1, asynchronous=True,
                                     failed=lambda: _boom().parallel(2).to_sorted_list()),
    # merges
    "parallel_sequential_delay_error": Entry(lambda n: _on(n).sequential_delay_error(), max_elements=100_000,
                                             asynchronous=True,
                                             failed=lambda: _boom().parallel(2).sequential_delay_error()),
    "parallel_flat_map": Entry(lambda n: _on(n).flat_map(lambda x: Flowable.just(x).hide()).sequential(),
                               max_elements=10_000, asynchronous=True),
    "parallel_concat_map": Entry(lambda n: _on(n).concat_map(lambda x: Flowable.just(x).hide()).sequential(),
                                 max_elements=10_000, asynchronous=True),
    # the rail count is kept: one container per rail
    "parallel_collect": Entry(_one_per_rail, max_elements=16),
}

