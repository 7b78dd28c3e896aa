"""TCK lines for the combining and flattening variants (``_facade_combine.py``) and
``publish(selector)``: ``make(n)`` emits exactly ``n`` elements."""

from __future__ import annotations

from typing import Any

from library_publishers import Entry

from rstreams import Flowable


def _r(n: int) -> Flowable[int]:
    return Flowable.range(0, n)


def _boom() -> Flowable[Any]:
    return Flowable.error(RuntimeError("boom"))


ENTRIES: dict[str, Entry] = {
    "concat_map_delay_error": Entry(
        lambda n: _r(n).concat_map_delay_error(lambda x: Flowable.just(x).hide()),
        failed=lambda: _boom().concat_map_delay_error(lambda x: Flowable.just(x)),
    ),
    "concat_map_delay_error_boundary": Entry(
        lambda n: _r(n).hide().concat_map_delay_error(lambda x: Flowable.just(x), till_the_end=False),
        failed=lambda: _boom().concat_map_delay_error(lambda x: Flowable.just(x), till_the_end=False),
    ),
    "switch_map_delay_error": Entry(
        lambda n: Flowable.just(0).switch_map_delay_error(lambda _: _r(n)),
        failed=lambda: Flowable.just(0).switch_map_delay_error(lambda _: _boom()),
    ),
    "merge_delay_error": Entry(
        lambda n: Flowable.merge_delay_error(_r(n // 2), _r(n - n // 2).hide()),
        failed=lambda: Flowable.merge_delay_error(_boom(), Flowable.empty()),
    ),
    "concat_eager": Entry(
        lambda n: Flowable.concat_eager(_r(n // 2).hide(), _r(n - n // 2).hide()),
        failed=lambda: Flowable.concat_eager(_boom(), _r(3)),
    ),
    "switch_on_next": Entry(
        lambda n: Flowable.switch_on_next(Flowable.just(Flowable.never(), _r(n)).hide()),
        failed=lambda: Flowable.switch_on_next(Flowable.just(_boom())),
    ),
    "end_with": Entry(lambda n: _r(n - 1).hide().end_with(-1) if n else Flowable.empty()),
    "pairwise": Entry(lambda n: _r(n + 1).pairwise(), max_elements=2**31 - 2),
    "pairwise_hidden": Entry(lambda n: _r(n + 1).hide().pairwise(), max_elements=2**31 - 2),
    "zip_with_index": Entry(lambda n: _r(n).zip_with_index()),
    "zip_with_index_hidden": Entry(lambda n: _r(n).hide().zip_with_index(5), failed=lambda: _boom().zip_with_index()),
    "enumerate": Entry(lambda n: _r(n).hide().enumerate()),
    "materialize": Entry(lambda n: _r(n - 1).materialize() if n else Flowable.empty()),
    # materialize turns an upstream error into an element: it has no failed publisher
    "materialize_hidden": Entry(lambda n: _r(n - 1).hide().materialize() if n else Flowable.empty()),
    # an upstream error passes straight through dematerialize (an on_error notification would
    # wait for demand in materialize, and the kit's failed publisher is not asked for any)
    "dematerialize": Entry(lambda n: _r(n).hide().materialize().dematerialize(), failed=lambda: _boom().dematerialize()),
    # publish(selector) over a hidden source (a TCK line is named after a public method, or
    # "<method>_hidden"); the connectable form has its own "publish" line
    "publish_hidden": Entry(
        lambda n: _r(n).hide().publish(lambda f: f.map(lambda x: x + 1)),
        failed=lambda: _boom().publish(lambda f: f),
    ),
}
