"""TCK lines for group_by's variants: group expiry and flat_map's fused group folds (``make(n)``
emits exactly ``n`` elements)."""

from __future__ import annotations

from typing import Any

from library_publishers import Entry

from rstreams import Flowable


def _r(n: int) -> Flowable[int]:
    return Flowable.range(0, n)


def _boom() -> Flowable[Any]:
    return Flowable.error(RuntimeError("boom"))


ENTRIES: dict[str, Entry] = {
    # names: "<method>_hidden..." (over a hidden source) or "flat_map_..." (tests/meta/test_tck_coverage.py)
    "group_by_hidden_expire_after_count": Entry(
        lambda n: _r(n).hide().group_by(lambda x: x % 3, expire_after_count=4).flat_map(lambda g: g, max_concurrency=None),
        failed=lambda: _boom().group_by(lambda x: x, expire_after_count=4).flat_map(lambda g: g),
        max_elements=10_000,
    ),
    "group_by_hidden_expire_after_idle": Entry(
        lambda n: _r(n).hide().group_by(lambda x: x % 3, expire_after_idle=3600).flat_map(lambda g: g, max_concurrency=None),
        failed=lambda: _boom().group_by(lambda x: x, expire_after_idle=3600).flat_map(lambda g: g),
        max_elements=10_000,
    ),
    "flat_map_group_fold": Entry(
        # one group per element, each counted in place: n results of 1
        lambda n: _r(n).group_by(lambda x: x).flat_map(lambda g: g.count(), max_concurrency=None),
        failed=lambda: _boom().group_by(lambda x: x).flat_map(lambda g: g.count()),
        max_elements=10_000,
    ),
}
