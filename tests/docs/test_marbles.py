"""The marble diagrams are recorded, not drawn: every public Flowable operator has a scenario (or a
listed reason why not), and every committed SVG is exactly what its scenario's run renders today.

Regenerate after changing an operator or a scenario: ``python docs/_tools/marbles.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rstreams import Flowable

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "docs" / "_tools"
sys.path.insert(0, str(TOOLS))

import marble_scenarios  # noqa: E402
import marbles  # noqa: E402

SCENARIOS = marble_scenarios.SCENARIOS
PUBLIC = sorted(n for n in dir(Flowable) if not n.startswith("_") and callable(getattr(Flowable, n)))


def test_every_public_operator_has_a_scenario_or_a_reason() -> None:
    missing = [n for n in PUBLIC if n not in SCENARIOS and n not in marble_scenarios.NO_DIAGRAM]
    assert not missing, (
        f"public Flowable methods without a marble scenario: {missing}; add one to docs/_tools/marble_scenarios.py "
        "(or a NO_DIAGRAM reason) and run python docs/_tools/marbles.py"
    )


def test_every_operator_is_filed_on_a_page() -> None:
    unfiled = [n for n in PUBLIC if n not in marble_scenarios.CATEGORY]
    assert not unfiled, f"methods that land on 'More operators' for want of a CATEGORY entry: {unfiled}"


def test_the_registry_names_only_public_methods() -> None:
    extra = {d for ds in marble_scenarios.EXTRA_DIAGRAMS.values() for d in ds}
    stray = [n for n in SCENARIOS if n not in PUBLIC and n not in extra]
    assert not stray, f"scenarios for names Flowable does not have: {stray}"
    reasons = [n for n in marble_scenarios.NO_DIAGRAM if n not in PUBLIC]
    assert not reasons, f"NO_DIAGRAM lists names Flowable does not have: {reasons}"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_committed_diagram_matches_its_recorded_run(name: str) -> None:
    path = Path(marbles.svg_path(name))
    assert path.is_file(), f"{path.name} is not committed: run python docs/_tools/marbles.py {name}"
    assert path.read_text(encoding="utf-8") == marbles.generate(name), (
        f"{path.name} no longer matches its recorded run: run python docs/_tools/marbles.py {name} and review the diff"
    )


def test_no_diagram_without_a_scenario() -> None:
    orphans = sorted(p.stem for p in (ROOT / "docs" / "marbles").glob("*.svg") if p.stem not in SCENARIOS)
    assert not orphans, f"SVGs in docs/marbles with no scenario: {orphans}"


def test_a_recording_is_the_signals_with_their_virtual_times() -> None:
    rec = marbles.record(SCENARIOS["map"])
    assert rec.sources[0][:2] == [(0.0, "request", "∞"), (1.0, "next", "1")]
    assert [e for e in rec.output if e[1] != "request"] == [
        (1.0, "next", "10"), (2.0, "next", "20"), (4.0, "next", "30"), (5.0, "next", "40"), (7.0, "complete", "")]


def test_a_changed_operator_fails_the_comparison() -> None:
    sc = SCENARIOS["map"]
    changed = marbles.Scenario(sc.name, lambda c: c.a.map(lambda x: x * 11), sc.lanes, label=sc.label)
    assert marbles.render(changed, marbles.record(changed)) != Path(marbles.svg_path("map")).read_text(encoding="utf-8")


def test_backpressure_diagrams_show_the_recorded_requests() -> None:
    svg = Path(marbles.svg_path("on_backpressure_drop")).read_text(encoding="utf-8")
    assert "request(1)" in svg and "request(∞)" in svg
