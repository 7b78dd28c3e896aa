"""Seeded, bounded multi-thread race tests of the toolkit, and proof that each one can fail.

Every race test is a *detector*: a function ``check_*(seed) -> str | None`` that runs one seeded
round of the race and returns a description of what went wrong (``None`` when all is well). The
race test runs the detector for many seeds against the real code and expects ``None`` every time.

For each detector there is a ``test_race_detector_fails_without_*`` test that removes the guard
(monkeypatching a non-atomic version in place of the atomic one) and asserts that the detector
reports a failure within a bounded number of seeded attempts: so CI checks the claim "this race test
would fail if the race handling were removed".

Why the broken versions yield: on CPython 3.11 with the GIL, a thread switch can only happen at an
eval-breaker check (function entry, a call, a backward jump). A read-modify-write with no call
between the read and the write (``old = self._value; self._value = old + 1``) therefore cannot be
interrupted, so merely deleting the lock is invisible to any test. The broken variants keep the
same logic without the lock and put ``time.sleep(0)`` between the read and the write, which is where
a free-threaded build (or any other scheduling) could interleave. Where deleting the lock *is*
observable under the GIL (MPSC batches built from generators, the capacity check), the guard-removed
test simply swaps the lock for a no-op one.

Short mode by default (each race test well under 1.5 s); ``RSTREAMS_STRESS=long`` runs ten times
as many rounds with a ten times larger time budget.
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest

from rstreams._internal import drain as drain_mod
from rstreams._internal import plugins
from rstreams._internal import requests as requests_mod
from rstreams._internal import subscriptions as subs_mod
from rstreams._internal.atomics import AtomicFlag, AtomicInt, AtomicRef
from rstreams._internal.drain import ErrorCollector, HalfSerializer
from rstreams._internal.subscriptions import CANCELLED, SubscriptionArbiter

from ._helpers import RecordingSubscriber, RecordingSubscription

pytestmark = pytest.mark.stress

LONG = os.environ.get("RSTREAMS_STRESS") == "long"
SCALE = 10 if LONG else 1
BASE_SEED = 20240611
MAX = 2**63 - 1

Check = Callable[[int], "str | None"]
T = TypeVar("T")


@pytest.fixture(autouse=True)
def fast_switching() -> Iterator[None]:
    """Make the GIL switch threads as often as it can, so races are observable; restore after."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def seeds(rounds: int, budget: float = 0.6) -> Iterator[int]:
    """Seeds for ``rounds`` rounds (x10 in long mode), stopping early when the time budget is spent."""
    rounds *= SCALE
    budget *= SCALE
    start = time.perf_counter()
    for i in range(rounds):
        if i >= 3 and time.perf_counter() - start > budget:
            return
        yield BASE_SEED + i


def run_together(*fns: Callable[[], None]) -> None:
    """Run each function on its own thread, released together by a barrier; re-raise any failure."""
    barrier = threading.Barrier(len(fns))
    failures: list[BaseException] = []

    def wrap(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                barrier.wait()
                fn()
            except BaseException as e:  # noqa: BLE001 - reported to the test below
                failures.append(e)

        return run

    threads = [threading.Thread(target=wrap(fn), daemon=True) for fn in fns]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads), "a racing thread hung"
    if failures:
        raise failures[0]


def jitter(rng: random.Random) -> None:
    """A random, small delay (0-2 thread yields), so rounds explore different interleavings."""
    for _ in range(rng.randint(0, 2)):
        time.sleep(0)


def assert_race_free(check: Check, rounds: int, budget: float = 0.6) -> int:
    n = 0
    for seed in seeds(rounds, budget):
        failure = check(seed)
        assert failure is None, f"seed {seed}: {failure}"
        n += 1
    assert n >= 3
    return n


def assert_detects(check: Check, attempts: int = 300, budget: float = 4.0) -> None:
    """The detector must report a failure within ``attempts`` seeded rounds (guard removed)."""
    start = time.perf_counter()
    for i in range(attempts):
        if check(BASE_SEED + i) is not None:
            return
        if time.perf_counter() - start > budget:
            break
    pytest.fail(f"the race detector did not notice the missing guard in {i + 1} attempts")


# ------------------------------------------------------------------------------------------------
# Broken ("guard removed") versions: the same logic, no lock, a thread yield between read and write.


def _yield() -> None:
    time.sleep(0)


def broken_get_and_add(self: Any, delta: int) -> int:
    old = self._value
    _yield()
    self._value = old + delta
    return old


def broken_add_and_get(self: Any, delta: int) -> int:
    return broken_get_and_add(self, delta) + delta


def broken_get_and_set(self: Any, value: Any) -> Any:
    old = self._value
    _yield()
    self._value = value
    return old


def broken_int_compare_and_set(self: Any, expect: int, update: int) -> bool:
    if self._value == expect:
        _yield()
        self._value = update
        return True
    return False


def broken_ref_compare_and_set(self: Any, expect: Any, update: Any) -> bool:
    if self._value is expect:
        _yield()
        self._value = update
        return True
    return False


def broken_try_set(self: Any) -> bool:
    if self._value:
        return False
    _yield()
    self._value = True
    return True


class SleepyAtomicInt:
    """AtomicInt's interface with every read-modify-write made non-atomic (the guard removed)."""

    def __init__(self, value: int = 0) -> None:
        self._value = value

    def get(self) -> int:
        return self._value

    def set(self, value: int) -> None:
        self._value = value

    get_and_add = broken_get_and_add
    add_and_get = broken_add_and_get
    get_and_set = broken_get_and_set
    compare_and_set = broken_int_compare_and_set

    def get_and_increment(self) -> int:
        return broken_get_and_add(self, 1)

    def increment_and_get(self) -> int:
        return broken_add_and_get(self, 1)

    def decrement_and_get(self) -> int:
        return broken_add_and_get(self, -1)


# ------------------------------------------------------------------------------------------------
# atomics


def check_get_and_add(seed: int) -> str | None:
    """N threads get_and_add concurrently: no lost update, and the returned values tile the range."""
    rng = random.Random(seed)
    a = AtomicInt()
    per_thread = [[rng.randint(1, 5) for _ in range(rng.randint(50, 150))] for _ in range(rng.randint(2, 4))]
    seen: list[tuple[int, int]] = []

    def worker(deltas: list[int]) -> None:
        out = [(a.get_and_add(d), d) for d in deltas]
        seen.extend(out)

    run_together(*[lambda d=d: worker(d) for d in per_thread])
    total = sum(map(sum, per_thread))
    if a.get() != total:
        return f"lost update: value {a.get()} != {total}"
    expect = 0
    for old, d in sorted(seen):
        if old != expect:
            return f"get_and_add returned {old}, expected {expect}: two callers saw the same value"
        expect += d
    return None


def _check_one_winner(seed: int, make: Callable[[], Any], initial: Any) -> str | None:
    """N threads race compare_and_set(initial, own token) on many fresh atomics: exactly one wins each."""
    rng = random.Random(seed)
    n_threads = rng.randint(2, 4)
    cells = [make() for _ in range(rng.randint(30, 60))]
    tokens = [object() if initial is None else i + 1 for i in range(n_threads)]
    wins: list[list[bool]] = [[] for _ in range(n_threads)]

    def worker(i: int) -> None:
        wins[i] = [c.compare_and_set(initial, tokens[i]) for c in cells]

    run_together(*[lambda i=i: worker(i) for i in range(n_threads)])
    for k, c in enumerate(cells):
        winners = [i for i in range(n_threads) if wins[i][k]]
        if len(winners) != 1:
            return f"cell {k}: {len(winners)} winners"
        if c.get() is not tokens[winners[0]] and c.get() != tokens[winners[0]]:
            return f"cell {k}: value is not the winner's token"
    return None


def check_int_compare_and_set(seed: int) -> str | None:
    return _check_one_winner(seed, AtomicInt, 0)


def check_ref_compare_and_set(seed: int) -> str | None:
    return _check_one_winner(seed, lambda: AtomicRef(None), None)


def check_get_and_set(seed: int) -> str | None:
    """Each value put in with get_and_set comes out exactly once (returned later, or left in the cell)."""
    rng = random.Random(seed)
    ref: AtomicRef[object] = AtomicRef("initial")
    n_threads = rng.randint(2, 4)
    puts = [[object() for _ in range(rng.randint(30, 100))] for _ in range(n_threads)]
    got: list[object] = []

    def worker(values: list[object]) -> None:
        got.extend([ref.get_and_set(v) for v in values])

    run_together(*[lambda v=v: worker(v) for v in puts])
    out = got + [ref.get()]
    expected = ["initial"] + [v for vs in puts for v in vs]
    if len(out) != len(expected) or {id(x) for x in out} != {id(x) for x in expected}:
        return f"{len(expected) - len(set(map(id, out)))} values lost or duplicated"
    return None


def check_try_set(seed: int) -> str | None:
    rng = random.Random(seed)
    n_threads = rng.randint(2, 4)
    flags = [AtomicFlag() for _ in range(rng.randint(30, 60))]
    wins: list[list[bool]] = [[] for _ in range(n_threads)]

    def worker(i: int) -> None:
        wins[i] = [f.try_set() for f in flags]

    run_together(*[lambda i=i: worker(i) for i in range(n_threads)])
    for k in range(len(flags)):
        n = sum(wins[i][k] for i in range(n_threads))
        if n != 1:
            return f"flag {k}: {n} winners"
    return None


def test_race_atomic_int_get_and_add_no_lost_update() -> None:
    assert_race_free(check_get_and_add, 60)


def test_race_detector_fails_without_lock_atomic_int_get_and_add(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(AtomicInt, "get_and_add", broken_get_and_add)
    assert_detects(check_get_and_add)


def test_race_atomic_int_compare_and_set_one_winner() -> None:
    assert_race_free(check_int_compare_and_set, 60)


def test_race_detector_fails_without_lock_atomic_int_cas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(AtomicInt, "compare_and_set", broken_int_compare_and_set)
    assert_detects(check_int_compare_and_set)


def test_race_atomic_ref_compare_and_set_one_winner() -> None:
    assert_race_free(check_ref_compare_and_set, 60)


def test_race_detector_fails_without_lock_atomic_ref_cas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(AtomicRef, "compare_and_set", broken_ref_compare_and_set)
    assert_detects(check_ref_compare_and_set)


def test_race_atomic_ref_get_and_set_each_value_once() -> None:
    assert_race_free(check_get_and_set, 60)


def test_race_detector_fails_without_lock_atomic_ref_get_and_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(AtomicRef, "get_and_set", broken_get_and_set)
    assert_detects(check_get_and_set)


def test_race_atomic_flag_try_set_one_winner() -> None:
    assert_race_free(check_try_set, 60)


def test_race_detector_fails_without_lock_atomic_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(AtomicFlag, "try_set", broken_try_set)
    assert_detects(check_try_set)


# ------------------------------------------------------------------------------------------------
# request accounting


def broken_add_request(requested: Any, n: int) -> int:
    old = requested._value
    if old >= MAX:
        return old
    _yield()
    requested._value = min(MAX, old + n)
    return old


def check_add_request(seed: int) -> str | None:
    """Concurrent add_request on fresh counters: exactly one caller sees 0 (the drain owner), exact total."""
    rng = random.Random(seed)
    n_threads = rng.randint(2, 4)
    counters = [AtomicInt() for _ in range(rng.randint(20, 40))]
    amounts = [
        [MAX if rng.random() < 0.05 else rng.randint(1, 100) for _ in counters] for _ in range(n_threads)
    ]
    prev: list[list[int]] = [[] for _ in range(n_threads)]

    def worker(i: int) -> None:
        prev[i] = [requests_mod.add_request(c, amounts[i][k]) for k, c in enumerate(counters)]

    run_together(*[lambda i=i: worker(i) for i in range(n_threads)])
    for k, c in enumerate(counters):
        owners = sum(prev[i][k] == 0 for i in range(n_threads))
        if owners != 1:
            return f"counter {k}: {owners} callers saw 0"
        expected = min(MAX, sum(amounts[i][k] for i in range(n_threads)))
        if c.get() != expected:
            return f"counter {k}: {c.get()} != {expected}"
    return None


def test_race_add_request_exactly_one_drain_owner() -> None:
    assert_race_free(check_add_request, 60)


def test_race_detector_fails_without_lock_add_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(requests_mod, "add_request", broken_add_request)
    assert_detects(check_add_request)


# ------------------------------------------------------------------------------------------------
# subscription helpers


def naive_deferred_request(ref: Any, requested: Any, n: int) -> None:
    """deferred_request without the re-check after accumulating: demand can be stranded."""
    s = ref.get()
    if s is not None:
        s.request(n)
        return
    _yield()  # widen the window between the read and the accumulation
    requests_mod.add_request(requested, n)


def doubling_deferred_request(ref: Any, requested: Any, n: int) -> None:
    """Re-checks, but forwards ``n`` itself instead of taking the accumulated demand with
    ``get_and_set(0)``: when the arrival already took it, ``n`` is forwarded twice."""
    s = ref.get()
    if s is not None:
        s.request(n)
        return
    requests_mod.add_request(requested, n)
    _yield()  # widen the window between the accumulation and the re-check
    s = ref.get()
    if s is not None:
        requested.set(0)
        s.request(n)


def check_deferred_request(seed: int) -> str | None:
    """deferred_request(n) k times racing deferred_set_once: the upstream sees exactly the total."""
    rng = random.Random(seed)
    ref: AtomicRef[Any] = AtomicRef(None)
    requested = AtomicInt()
    up = RecordingSubscription()
    amounts = [rng.randint(1, 10) for _ in range(rng.randint(1, 30))]
    delay = rng.randint(0, 4)

    def requester() -> None:
        for n in amounts:
            subs_mod.deferred_request(ref, requested, n)

    def arrival() -> None:
        for _ in range(delay):
            _yield()
        subs_mod.deferred_set_once(ref, requested, up)

    run_together(requester, arrival)
    if up.total != sum(amounts):
        return f"upstream saw {up.total} (requests {up.requests}), expected {sum(amounts)}"
    return None


def test_race_deferred_request_vs_arrival_exact_total() -> None:
    assert_race_free(check_deferred_request, 150)


def test_race_detector_fails_without_recheck_deferred_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subs_mod, "deferred_request", naive_deferred_request)
    assert_detects(check_deferred_request)


def test_race_detector_fails_with_non_atomic_take_deferred_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subs_mod, "deferred_request", doubling_deferred_request)
    assert_detects(check_deferred_request)


def broken_cancel(ref: Any) -> bool:
    cur = ref.get()
    if cur is CANCELLED:
        return False
    _yield()
    ref.set(CANCELLED)
    if cur is not None:
        cur.cancel()
    return True


def check_cancel_vs_set_once(seed: int) -> str | None:
    """cancel racing the upstream's arrival: the upstream is cancelled exactly once, nothing reported."""
    rng = random.Random(seed)
    pairs = [(AtomicRef(None), RecordingSubscription(str(i))) for i in range(rng.randint(10, 30))]
    delays = [rng.randint(0, 2) for _ in pairs]

    def arrive() -> None:
        for (ref, up), d in zip(pairs, delays, strict=True):
            for _ in range(d):
                _yield()
            subs_mod.set_once(ref, up)

    def canceller() -> None:
        for ref, _ in pairs:
            subs_mod.cancel(ref)

    with plugins.collect_errors() as errors:
        run_together(arrive, canceller)
    if errors:
        return f"reported: {errors}"
    for k, (ref, up) in enumerate(pairs):
        if up.cancels != 1 or ref.get() is not CANCELLED:
            return f"pair {k}: upstream cancelled {up.cancels} times, field {ref.get()!r}"
    return None


def test_race_cancel_vs_set_once_cancels_exactly_once() -> None:
    assert_race_free(check_cancel_vs_set_once, 100)


def test_race_detector_fails_without_atomic_swap_cancel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subs_mod, "cancel", broken_cancel)
    assert_detects(check_cancel_vs_set_once)


def check_set_once_concurrent(seed: int) -> str | None:
    """Several upstreams race set_once: one stored, each other one cancelled and reported (rule 2.12)."""
    rng = random.Random(seed)
    n_threads = rng.randint(2, 4)
    fields = [AtomicRef(None) for _ in range(rng.randint(10, 20))]
    ups = [[RecordingSubscription(f"{i}") for _ in fields] for i in range(n_threads)]

    def worker(i: int) -> None:
        for ref, up in zip(fields, ups[i], strict=True):
            subs_mod.set_once(ref, up)

    with plugins.collect_errors() as errors:
        run_together(*[lambda i=i: worker(i) for i in range(n_threads)])
    for k, ref in enumerate(fields):
        stored = [ups[i][k] for i in range(n_threads) if ups[i][k].cancels == 0]
        if len(stored) != 1 or ref.get() is not stored[0]:
            return f"field {k}: {len(stored)} upstreams left uncancelled"
    if len(errors) != len(fields) * (n_threads - 1):
        return f"{len(errors)} rule 2.12 reports, expected {len(fields) * (n_threads - 1)}"
    return None


def test_race_set_once_exactly_one_stored() -> None:
    assert_race_free(check_set_once_concurrent, 60)


def test_race_detector_fails_without_lock_set_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(AtomicRef, "compare_and_set", broken_ref_compare_and_set)
    assert_detects(check_set_once_concurrent)


class NoWip:
    """A wip counter that lets every caller drain at once (the arbiter's serialization removed)."""

    def get(self) -> int:
        return 0

    def get_and_increment(self) -> int:
        return 0

    def add_and_get(self, delta: int) -> int:
        return 0


def check_arbiter(seed: int) -> str | None:
    """Downstream requests race the upstream side's produced + switches: the last upstream is asked for
    exactly what is outstanding (all requests minus all produced), each replaced one cancelled once."""
    rng = random.Random(seed)
    arb = SubscriptionArbiter()
    wip_factory = getattr(check_arbiter, "broken_wip", None)
    if wip_factory is not None:
        arb._wip = wip_factory()  # type: ignore[assignment]
    ups = [RecordingSubscription(f"up{i}", yield_in_cancel=True) for i in range(rng.randint(2, 4))]
    initial = rng.randint(5, 20)
    arb.set_subscription(ups[0])
    arb.request(initial)
    emitted = [rng.randint(0, initial // len(ups)) for _ in ups[1:]]
    amounts = [rng.randint(1, 5) for _ in range(rng.randint(1, 25))]
    delays = [rng.randint(0, 3) for _ in ups[1:]]

    def downstream() -> None:
        for n in amounts:
            arb.request(n)

    def upstream_side() -> None:
        for up, n, delay in zip(ups[1:], emitted, delays, strict=True):
            for _ in range(delay):
                _yield()
            arb.produced(n)
            arb.set_subscription(up)

    with plugins.collect_errors() as errors:
        run_together(downstream, upstream_side)
    expected_last = initial + sum(amounts) - sum(emitted)
    if errors:
        return f"reported: {errors}"
    if ups[-1].total != expected_last:
        return f"last upstream asked for {ups[-1].total} ({ups[-1].requests}), expected {expected_last}"
    if [u.cancels for u in ups] != [1] * (len(ups) - 1) + [0]:
        return f"cancels: {[u.cancels for u in ups]}"
    return None


def test_race_arbiter_request_vs_switch_exact_totals() -> None:
    assert_race_free(check_arbiter, 150)


def test_race_detector_fails_without_wip_arbiter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_arbiter, "broken_wip", NoWip, raising=False)
    assert_detects(check_arbiter)


def test_race_detector_fails_with_non_atomic_wip_arbiter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_arbiter, "broken_wip", SleepyAtomicInt, raising=False)
    assert_detects(check_arbiter)


# ------------------------------------------------------------------------------------------------
# drain: the wip/missed queue-drain


def broken_enter(wip: Any) -> bool:
    old = wip._value
    _yield()
    wip._value = old + 1
    return old == 0


def broken_leave(wip: Any, missed: int) -> int:
    old = wip._value
    _yield()
    wip._value = old - missed
    return old - missed


def check_queue_drain(seed: int) -> str | None:
    """Producers append to a deque (as the operators' queues do) and call a drain guarded by
    enter/leave: every item delivered exactly once, in each producer's order, and never two
    drainers at once."""
    rng = random.Random(seed)
    q: deque[tuple[int, int]] = deque()
    wip = AtomicInt()
    inside = AtomicInt()
    overlaps = AtomicInt()
    delivered: list[tuple[int, int]] = []
    n_producers = rng.randint(2, 4)
    plans = [[rng.randint(1, 4) for _ in range(rng.randint(5, 25))] for _ in range(n_producers)]

    def drain() -> None:
        if not drain_mod.enter(wip):
            return
        missed = 1
        while True:
            if inside.increment_and_get() != 1:
                overlaps.increment_and_get()
            while True:
                batch = [q.popleft() for _ in range(min(3, len(q)))]
                if not batch:
                    break
                delivered.extend(batch)
                _yield()  # a slow consumer: another producer gets to run mid-drain
            inside.decrement_and_get()
            missed = drain_mod.leave(wip, missed)
            if missed == 0:
                break

    def producer(p: int) -> None:
        i = 0
        for size in plans[p]:
            if size == 1:
                q.append((p, i))
            else:
                q.extend([(p, i + j) for j in range(size)])
            i += size
            drain()

    try:
        run_together(*[lambda p=p: producer(p) for p in range(n_producers)])
    except IndexError as e:  # two drainers popped the single-consumer queue at once
        return f"concurrent drain passes broke the queue: {e!r}"
    if overlaps.get():
        return f"{overlaps.get()} overlapping drain passes"
    for p in range(n_producers):
        got = [i for (pp, i) in delivered if pp == p]
        if got != list(range(sum(plans[p]))):
            return f"producer {p}: delivered {len(got)} of {sum(plans[p])} (lost, duplicated or reordered)"
    if len(q):
        return f"{len(q)} items left undelivered in the queue"
    return None


def test_race_queue_drain_exactly_once_no_overlap() -> None:
    assert_race_free(check_queue_drain, 100)


def test_race_detector_fails_without_atomic_wip_queue_drain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drain_mod, "enter", broken_enter)
    monkeypatch.setattr(drain_mod, "leave", broken_leave)
    assert_detects(check_queue_drain)


# ------------------------------------------------------------------------------------------------
# ErrorCollector


def broken_collector_add(self: Any, error: BaseException) -> bool:
    if self._terminated:
        return False
    _yield()
    self._errors.append(error)
    return True


def _flatten(e: BaseException | None) -> list[BaseException]:
    if e is None:
        return []
    if isinstance(e, BaseExceptionGroup):
        return list(e.exceptions)
    return [e]


def check_error_collector(seed: int) -> str | None:
    """add_or_report from several threads racing terminate: each error ends up in exactly one place."""
    rng = random.Random(seed)
    ec = ErrorCollector()
    n_threads = rng.randint(2, 3)
    errs = [[ValueError(f"{t}-{i}") for i in range(rng.randint(1, 10))] for t in range(n_threads)]
    delay = rng.randint(0, 6)
    result: list[BaseException | None] = []

    def adder(t: int) -> None:
        for e in errs[t]:
            ec.add_or_report(e)

    def terminator() -> None:
        for _ in range(delay):
            _yield()
        result.append(ec.terminate())

    with plugins.collect_errors() as reported:
        run_together(terminator, *[lambda t=t: adder(t) for t in range(n_threads)])
    delivered = _flatten(result[0])
    everything = [e for es in errs for e in es]
    seen = [id(e) for e in delivered + reported]
    if sorted(seen) != sorted(id(e) for e in everything):
        return f"{len(everything)} errors, {len(delivered)} delivered + {len(reported)} reported"
    return None


def test_race_error_collector_add_vs_terminate() -> None:
    assert_race_free(check_error_collector, 100)


def test_race_detector_fails_without_lock_error_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ErrorCollector, "add", broken_collector_add)
    assert_detects(check_error_collector)


# ------------------------------------------------------------------------------------------------
# HalfSerializer


class _UnguardedHalfSerializer(HalfSerializer):
    """HalfSerializer's algorithm with its lock removed and a thread switch inside each
    read-modify-write of ``_wip`` (what the lock guards)."""

    def on_next(self, item: Any) -> None:
        if self._done:
            return
        w = self._wip
        _yield()
        if w:
            return
        self._wip = 1
        self._downstream.on_next(item)
        w = self._wip - 1
        _yield()
        self._wip = w
        if w:
            self._errors.terminate_into(self._downstream)
            self._done = True

    def _enter_terminal(self) -> bool:
        w = self._wip
        _yield()
        self._wip = w + 1
        return w == 0


def check_half_serializer(seed: int) -> str | None:
    """on_next from one thread racing on_error/on_complete from others: never overlapping calls,
    exactly one terminal signal, nothing after it, and the items a gap-free prefix."""
    rng = random.Random(seed)
    down = RecordingSubscriber(yield_in_on_next=True)
    broken = getattr(check_half_serializer, "broken", False)
    hs = _UnguardedHalfSerializer(down) if broken else HalfSerializer(down)
    items = rng.randint(5, 40)
    kinds = rng.choice([["error"], ["complete"], ["error", "complete"], ["error", "error"]])
    errors = [ValueError(f"e{k}") for k in range(len(kinds))]
    delays = [rng.randint(0, 8) for _ in kinds]

    def nexts() -> None:
        for i in range(items):
            hs.on_next(i)

    def terminal(k: int) -> Callable[[], None]:
        def run() -> None:
            for _ in range(delays[k]):
                _yield()
            if kinds[k] == "error":
                hs.on_error(errors[k])
            else:
                hs.on_complete()

        return run

    with plugins.collect_errors() as reported:
        run_together(nexts, *[terminal(k) for k in range(len(kinds))])
    if down.overlaps:
        return f"{down.overlaps} overlapping calls to the downstream"
    terminals = down.terminals
    if len(terminals) != 1:
        return f"{len(terminals)} terminal signals: {terminals}"
    if down.events[-1] is not terminals[0]:
        return "a signal arrived after the terminal one"
    if down.values != list(range(len(down.values))):
        return f"items are not a gap-free prefix: {down.values}"
    delivered = _flatten(terminals[0][1]) if terminals[0][0] == "error" else []
    signalled = [e for e, kind in zip(errors, kinds, strict=True) if kind == "error"]
    if sorted(map(id, delivered + reported)) != sorted(map(id, signalled)):
        return "an error was lost or delivered twice"
    return None


def test_race_half_serializer() -> None:
    assert_race_free(check_half_serializer, 150)


def test_race_detector_fails_without_atomic_wip_half_serializer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_half_serializer, "broken", True, raising=False)
    assert_detects(check_half_serializer)


# ------------------------------------------------------------------------------------------------
# post-complete


def broken_post_complete_request(
    n: int, downstream: Any, queue: Any, requested: Any, is_cancelled: Callable[[], bool]
) -> bool:
    """post_complete_request whose read-modify-write of (completed bit | demand) is not atomic."""
    r = requested._value
    u = min(MAX, (r & drain_mod.REQUESTED_MASK) + n)
    _yield()
    requested._value = (r & drain_mod.COMPLETED_MASK) | u
    if r == drain_mod.COMPLETED_MASK:
        drain_mod._post_complete_drain(
            n | drain_mod.COMPLETED_MASK, downstream, queue, requested, is_cancelled
        )
        return False
    return (r & drain_mod.COMPLETED_MASK) == 0


def _check_post_complete(seed: int, size: int) -> str | None:
    rng = random.Random(seed)
    down = RecordingSubscriber(yield_in_on_next=True)
    queue: deque[int] = deque(range(size))
    requested = AtomicInt()
    amounts = [rng.randint(1, 3) for _ in range(rng.randint(1, max(2, size)))]
    before = rng.randint(0, 2)  # requests made before completion
    for _ in range(before):
        amounts.insert(0, 1)
        drain_mod.post_complete_request(1, down, queue, requested, lambda: False)
    delay = rng.randint(0, 3)
    gaps = [rng.randint(0, 1) for _ in amounts]

    def completer() -> None:
        for _ in range(delay):
            _yield()
        drain_mod.post_complete(down, queue, requested, lambda: False)

    def requester() -> None:
        for n, gap in zip(amounts[before:], gaps, strict=False):
            for _ in range(gap):
                _yield()
            drain_mod.post_complete_request(n, down, queue, requested, lambda: False)

    run_together(completer, requester)
    total = sum(amounts)
    expected: list[tuple[Any, ...]] = [("next", i) for i in range(min(total, size))]
    if total >= size:
        expected.append(("complete",))
    if down.overlaps:
        return f"{down.overlaps} overlapping calls to the downstream"
    if down.events != expected:
        return f"requested {total} of {size}: got {down.events}"
    return None


def check_post_complete_single(seed: int) -> str | None:
    return _check_post_complete(seed, 1)


def check_post_complete_many(seed: int) -> str | None:
    return _check_post_complete(seed, 1 + random.Random(-seed).randint(2, 20))


@pytest.mark.parametrize(
    "check", [check_post_complete_single, check_post_complete_many], ids=["single", "many"]
)
def test_race_post_complete_request_vs_complete(check: Check) -> None:
    assert_race_free(check, 150)


@pytest.mark.parametrize(
    "check", [check_post_complete_single, check_post_complete_many], ids=["single", "many"]
)
def test_race_detector_fails_without_lock_post_complete(
    check: Check, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(drain_mod, "post_complete_request", broken_post_complete_request)
    assert_detects(check)


def unguarded_drain_post_complete_request(
    n: int, downstream: Any, queue: Any, requested: Any, is_cancelled: Callable[[], bool]
) -> bool:
    """Atomic update, but drains whenever completed instead of only on the 0 -> n transition:
    a second drainer can run beside the one already emitting."""
    with requested._lock:
        r = requested._value
        u = min(MAX, (r & drain_mod.REQUESTED_MASK) + n)
        requested._value = (r & drain_mod.COMPLETED_MASK) | u
    if r & drain_mod.COMPLETED_MASK:
        drain_mod._post_complete_drain(
            n | drain_mod.COMPLETED_MASK, downstream, queue, requested, is_cancelled
        )
        return False
    return True


def test_race_detector_fails_without_drain_ownership_post_complete(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drain_mod, "post_complete_request", unguarded_drain_post_complete_request)
    assert_detects(check_post_complete_many)
