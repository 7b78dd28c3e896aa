"""TCK lines for the predicate-cut buffers and windows (``_facade_boundary.py``) and for the
Publisher-driven forms of ``buffer``, ``window``, ``sample``, ``debounce`` and ``delay`` (overloads
of methods whose duration/count forms have their lines in ``library_publishers.py``): ``make(n)``
emits exactly ``n`` elements.

The boundary forms cannot be backpressured (RxJava 3: a boundary is a clock), so, as the
``buffer_timed`` line, they are buffered after; their boundary is the source itself, shared with
``publish(selector)``, so each element cuts once: ``n`` elements give ``n + 1`` lists (the first
one empty), of which ``take(n)`` keeps ``n``."""

from __future__ import annotations

from typing import Any

from library_publishers import Entry

from rstreams import Flowable


def _boom() -> Flowable[Any]:
    return Flowable.error(RuntimeError("boom"))


def _odd(x: int) -> bool:
    return x % 2 == 1


def _even(x: int) -> bool:
    return x % 2 == 0


ENTRIES: dict[str, Entry] = {
    # 2n elements, cut after each odd one: n lists [2k, 2k + 1]
    "buffer_until": Entry(
        lambda n: Flowable.range(0, 2 * n).buffer_until(_odd),
        max_elements=10_000,
        failed=lambda: _boom().buffer_until(_odd),
    ),
    # the unfused path and cut_before: n lists [2k, 2k + 1] (an even element starts a list)
    "buffer_until_hidden_cut_before": Entry(
        lambda n: Flowable.range(0, 2 * n).hide().buffer_until(_even, cut_before=True),
        max_elements=10_000,
    ),
    # odd elements are separators: n lists [2k]
    "buffer_while": Entry(
        lambda n: Flowable.range(0, 2 * n).hide().buffer_while(_even),
        max_elements=10_000,
        failed=lambda: _boom().buffer_while(_even),
    ),
    "window_until": Entry(
        lambda n: Flowable.range(0, 2 * n).window_until(_odd, prefetch=8).flat_map(lambda w: w.take(1)),
        max_elements=10_000,
        failed=lambda: _boom().window_until(_odd),
    ),
    "window_while": Entry(
        lambda n: Flowable.range(0, 2 * n).window_while(_even, prefetch=8).concat_map(lambda w: w),
        max_elements=10_000,
        failed=lambda: _boom().window_while(_even),
    ),
    "buffer_hidden_boundary": Entry(
        lambda n: Flowable.range(0, n).hide().publish(lambda s: s.buffer(s)).on_backpressure_buffer().take(n),
        max_elements=10_000,
        failed=lambda: _boom().buffer(Flowable.never()),
    ),
    "window_hidden_boundary": Entry(
        lambda n: Flowable.range(0, n).hide().publish(lambda s: s.window(s)).on_backpressure_buffer().take(n),
        max_elements=10_000,
        failed=lambda: _boom().window(Flowable.never()),
    ),
    # each element opens a list that an empty closer closes at once: n empty lists; closed lists
    # wait for demand (no buffering needed after it)
    "buffer_hidden_openings": Entry(
        lambda n: Flowable.range(0, n).hide().publish(lambda s: s.buffer(s, lambda o: Flowable.empty())),
        max_elements=10_000,
        failed=lambda: _boom().buffer(Flowable.never(), lambda o: Flowable.never()),
    ),
    # each element samples the one before it; emit_last adds the last: n elements
    "sample_hidden_sampler": Entry(
        lambda n: Flowable.range(0, n).hide().publish(lambda s: s.sample(s, emit_last=True)).on_backpressure_buffer(),
        max_elements=10_000,
        failed=lambda: _boom().sample(Flowable.never()),
    ),
    # an empty debouncer lets every element through at once
    "debounce_hidden_selector": Entry(
        lambda n: Flowable.range(0, n).hide().debounce(lambda x: Flowable.empty()).on_backpressure_buffer(),
        max_elements=10_000,
        failed=lambda: _boom().debounce(lambda x: Flowable.never()),
    ),
    "delay_hidden_selector": Entry(
        lambda n: Flowable.range(0, n).hide().delay(lambda x: Flowable.empty()),
        max_elements=10_000,
        failed=lambda: _boom().delay(lambda x: Flowable.empty()),
    ),
}
