"""Bar charts of ``python -m benchmarks --json`` output, for the site's Performance page.

    python docs/_tools/benchplot.py RUN.json [RUN2.json ...]   # copy each run to docs/perf/data/, draw it
    python docs/_tools/benchplot.py                            # redraw every committed run
    python docs/_tools/benchplot.py --check                    # exit 1 if a committed SVG differs

One SVG per benchmark of a run (``docs/perf/<run>-<benchmark>.svg``): a horizontal bar per variant,
its length the variant's ratio (its items/s over the items/s of the baseline declared before it, as
the harness computes it), a line at 1.0x, the items/s at the bar's end, the target and whether it was
met. Baselines are grey, rstreams variants blue, peers (other libraries, hand-written code) orange.
The machine, the date, the commit and whether it was a ``--quick`` run come from the JSON. The SVG is
a pure function of the JSON, so ``tests/docs/test_perf_charts.py`` can check the committed charts.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import sys
from collections.abc import Sequence
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PERF = os.path.join(ROOT, "docs", "perf")
DATA = os.path.join(PERF, "data")

_W = 860
_LABEL_W = 420
_BAR_X = _LABEL_W + 10
_BAR_W = 300  # pixels for the largest ratio drawn
_ROW = 24


def _rate(x: float | None) -> str:
    if x is None:
        return "-"
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= div:
            return f"{x / div:.3g} {unit}/s"
    return f"{x:.3g} /s"


def _short(text: str, limit: int = 62) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def run_label(doc: dict[str, Any]) -> str:
    m = doc.get("machine", {})
    commit = (doc.get("git_commit") or "?")[:10]
    mode = "quick run (smoke mode: tiny N, 1 repeat)" if doc.get("quick") else f"{doc.get('repeats', '?')} repeats, median"
    return (f"{doc.get('date', '?')} · {m.get('implementation', '?')} {m.get('python', '?')} · "
            f"{m.get('cpu_count', '?')} cores {m.get('machine', '?')} · {m.get('platform', '?')} · git {commit} · {mode}")


def chart(doc: dict[str, Any], bench: dict[str, Any]) -> str:
    """The SVG bar chart of one benchmark of a run."""
    rows = bench.get("results", [])
    ratios = [r["ratio"] for r in rows if r.get("ratio") is not None]
    scale_max = max([1.0, *ratios])
    height = 70 + _ROW * max(1, len(rows)) + 28
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {height}" width="{_W}" height="{height}" '
        f'role="img" aria-label="benchmark {html.escape(bench["name"])}">',
        f"<title>{html.escape(bench['name'])}: {html.escape(bench.get('title', ''))}</title>",
        "<style>text{font:12px sans-serif;fill:#222}.t{font:bold 14px sans-serif}.m{fill:#666;font-size:11px}"
        ".base{fill:#9e9e9e}.ours{fill:#3f51b5}.peer{fill:#ff9800}.one{stroke:#c62828;stroke-dasharray:4 3}"
        ".na{fill:#c62828}.ok{fill:#2e7d32}.miss{fill:#c62828}</style>",
        f'<rect width="{_W}" height="{height}" fill="#fff"/>',
        f'<text x="8" y="20" class="t">{html.escape(bench["name"])} (N = {bench.get("n", "?"):,})</text>',
        f'<text x="8" y="38" class="m">{html.escape(_short(bench.get("title", ""), 140))}</text>',
        f'<text x="8" y="54" class="m">{html.escape(run_label(doc))}</text>',
    ]
    one_x = _BAR_X + _BAR_W / scale_max
    top = 66
    out.append(f'<line x1="{one_x:.1f}" y1="{top - 4}" x2="{one_x:.1f}" y2="{top + _ROW * len(rows)}" class="one"/>')
    out.append(f'<text x="{one_x:.1f}" y="{top + _ROW * len(rows) + 14}" class="m" text-anchor="middle">1.0x its baseline</text>')
    for i, r in enumerate(rows):
        y = top + i * _ROW
        name = r["variant"]
        kind = "base" if r.get("baseline") else ("peer" if name.startswith("peer:") else "ours")
        out.append(f'<text x="{_LABEL_W}" y="{y + 15}" text-anchor="end">{html.escape(_short(name))}</text>')
        if r.get("status") != "ok" or r.get("ratio") is None:
            reason = r.get("status", "?") + (f" ({r['reason']})" if r.get("reason") else "")
            out.append(f'<text x="{_BAR_X}" y="{y + 15}" class="na">{html.escape(_short(reason, 70))}</text>')
            continue
        w = max(1.0, _BAR_W * r["ratio"] / scale_max)
        out.append(f'<rect x="{_BAR_X}" y="{y + 4}" width="{w:.1f}" height="{_ROW - 8}" class="{kind}"/>')
        label = f"{r['ratio']:.2f}x · {_rate(r.get('items_per_s'))}"
        targets = r.get("targets") or []
        verdicts = [t for t in targets if t.get("met") is not None]
        if verdicts:
            n_met = sum(1 for t in verdicts if t["met"])
            if len(verdicts) == 1:
                label += " · target " + ("met" if n_met else "missed")
            else:
                label += f" · {n_met} of {len(verdicts)} targets met"
        out.append(f'<text x="{_BAR_X + w + 6:.1f}" y="{y + 15}">{html.escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def runs() -> list[str]:
    """The committed runs (file stems under docs/perf/data), newest name last."""
    if not os.path.isdir(DATA):
        return []
    return sorted(f[:-5] for f in os.listdir(DATA) if f.endswith(".json"))


def load(run: str) -> dict[str, Any]:
    with open(os.path.join(DATA, f"{run}.json"), encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def charts(run: str) -> dict[str, str]:
    """``<run>-<benchmark>.svg`` -> SVG text, for the benchmarks of a run that have results."""
    doc = load(run)
    return {f"{run}-{b['name']}.svg": chart(doc, b) for b in doc["benchmarks"] if b.get("results")}


def main(argv: Sequence[str]) -> int:
    check = "--check" in argv
    for src in (a for a in argv if not a.startswith("--")):
        os.makedirs(DATA, exist_ok=True)
        shutil.copyfile(src, os.path.join(DATA, os.path.basename(src)))
    stale = []
    for run in runs():
        for name, text in charts(run).items():
            path = os.path.join(PERF, name)
            old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
            if old != text:
                stale.append(name)
                if not check:
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(text)
    print(f"{len(stale)} chart(s) {'stale' if check else 'written'}: {stale}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
