"""TCK lines for sorting, sets, multimaps, arithmetic aggregates, ``sequence_equal`` and the
single-element checks (``_facade_aggregate.py``): ``make(n)`` emits exactly ``n`` elements. The
blocking samplers return iterators, not Publishers: they are consumers."""

from __future__ import annotations

from typing import Any

from library_publishers import Entry

from rstreams import Flowable


def _r(n: int) -> Flowable[int]:
    return Flowable.range(0, n)


def _boom() -> Flowable[Any]:
    return Flowable.error(RuntimeError("boom"))


ENTRIES: dict[str, Entry] = {
    # sorted emits every element (in order) as requested: an n-element Publisher
    "sorted": Entry(lambda n: Flowable.range(0, n).map(lambda x: n - 1 - x).sorted(), max_elements=100_000,
                    failed=lambda: _boom().sorted()),
    "sorted_hidden": Entry(lambda n: _r(n).hide().sorted(reverse=True), max_elements=100_000),
    # single-valued
    "to_sorted_list": Entry(lambda n: _r(10).hide().to_sorted_list(), max_elements=1, failed=lambda: _boom().to_sorted_list()),
    "to_set": Entry(lambda n: _r(10).hide().to_set(), max_elements=1, failed=lambda: _boom().to_set()),
    "to_multimap": Entry(lambda n: _r(10).hide().to_multimap(lambda x: x % 3), max_elements=1),
    "sum": Entry(lambda n: _r(10).hide().sum(), max_elements=1, failed=lambda: _boom().sum()),
    "min": Entry(lambda n: _r(10).hide().min(), max_elements=1),
    "max": Entry(lambda n: _r(10).hide().max(), max_elements=1),
    "average": Entry(lambda n: _r(10).hide().average(), max_elements=1),
    "sequence_equal": Entry(lambda n: Flowable.sequence_equal(_r(10).hide(), _r(10).hide()), max_elements=1,
                            failed=lambda: Flowable.sequence_equal(_boom(), _r(3))),
    "single": Entry(lambda n: Flowable.just(1).hide().single(0), max_elements=1, failed=lambda: _boom().single(0)),
    "single_or_error": Entry(lambda n: Flowable.just(1).hide().single_or_error(), max_elements=1),
    "first_or_error": Entry(lambda n: _r(10).hide().first_or_error(), max_elements=1),
    "last_or_error": Entry(lambda n: _r(10).hide().last_or_error(), max_elements=1),
}

#: These return iterators (they consume the Flowable), not Publishers.
CONSUMERS: set[str] = {"blocking_latest", "blocking_next", "blocking_most_recent"}
