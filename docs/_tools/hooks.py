"""MkDocs hooks: the operator reference pages, generated at build time from the live ``Flowable``.

Every public Flowable method gets an entry on the page of its category (``CATEGORY`` in
``marble_scenarios.py``; a method not listed there lands on "More operators"), with its marble
diagram(s) from ``docs/marbles/`` and its docstring rendered by mkdocstrings. A method added to the
facade appears on the site without anyone editing a page; ``tests/docs/test_marbles.py`` asks for
its scenario.
"""

from __future__ import annotations

import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.append(HERE)
# imported now: MkDocs restores sys.path once the hook module is loaded
import benchplot  # noqa: E402
import marble_scenarios  # noqa: E402

PAGES: dict[str, tuple[str, str]] = {
    # category: (title, introduction)
    "creating": ("Creating Flowables", "Sources: where a stream's elements come from. Each honours demand (it emits "
                 "only what was requested), unless its entry says otherwise."),
    "transforming": ("Transforming", "One element in, some elements out: mapping, flattening, grouping, buffering."),
    "filtering": ("Filtering", "Which elements pass: by predicate, by position, by another stream."),
    "combining": ("Combining", "Several sources into one stream."),
    "aggregates": ("Aggregates", "A whole stream into one value, emitted at completion (or as soon as it is known)."),
    "windows": ("Event-time windows", "Windows by the elements' own timestamps (event time), with a watermark, "
                "allowed lateness and late elements, as Spark's and Flink's. The diagrams show each window's "
                "aggregate when it closes."),
    "errors": ("Errors and retries", "Recovering from ``on_error``: fallbacks, retries and repeats."),
    "time": ("Time", "Operators driven by a clock. Every one takes a ``scheduler``; the diagrams ran on the "
             "virtual-time ``TestScheduler``, as your tests can."),
    "backpressure": ("Backpressure", "What happens when the producer is faster than the consumer's demand. The "
                     "``request(n)`` annotations are the recorded calls: above a source lane, what the operator "
                     "asked upstream; below the output lane, what the subscriber asked."),
    "boundaries": ("Threads and boundaries", "Moving signals between threads (the diagrams ran with the virtual-time "
                   "scheduler as the boundary's scheduler)."),
    "multicast": ("Multicast", "One upstream subscription shared by several subscribers. Each diagram has a "
                  "second subscriber arriving at t=3, on its own lane below the first."),
    "side-effects": ("Side effects and debugging", "Looking at signals without changing them: callbacks, logging, "
                     "metrics names, checkpoints."),
    "asyncio": ("Asyncio", "Bridges to asyncio: coroutines as stages, ``await`` and ``async for``. These run on an "
                "event loop, not on virtual time, so they have no marble diagram; see the guide "
                "[Threads and asyncio in one model](../../guides/threads-and-asyncio.md)."),
    "consuming": ("Subscribing and blocking", "The calls that end a chain. They have no diagram: each diagram's "
                  "output lane is what a subscriber receives."),
    "more": ("More operators", "Operators not yet filed under a category."),
}


def _defining_path(name: str) -> str:
    from rstreams import Flowable

    for cls in Flowable.__mro__:
        if name in cls.__dict__:
            return f"{cls.__module__}.{cls.__qualname__}.{name}"
    raise LookupError(name)


def public_methods() -> list[str]:
    from rstreams import Flowable

    return sorted(n for n in dir(Flowable) if not n.startswith("_") and callable(getattr(Flowable, n)))


def _entry(name: str) -> str:
    EXTRA_DIAGRAMS, NO_DIAGRAM, SCENARIOS = (
        marble_scenarios.EXTRA_DIAGRAMS, marble_scenarios.NO_DIAGRAM, marble_scenarios.SCENARIOS)

    lines = [f"## `{name}` {{ #{name} }}", ""]
    for diagram in ([name] if name in SCENARIOS else []) + EXTRA_DIAGRAMS.get(name, []):
        lines += [f"![marble diagram of {diagram}](../../marbles/{diagram}.svg){{ .marble loading=lazy }}", ""]
    if name in NO_DIAGRAM:
        lines += ['!!! note "No diagram"', f"    {NO_DIAGRAM[name]}.", ""]
    elif name not in SCENARIOS:
        lines += ['!!! warning "No diagram yet"', "    This operator has no marble scenario yet.", ""]
    lines += [f"::: {_defining_path(name)}", "    options:", "      show_root_heading: false", "      show_root_toc_entry: false", "      heading_level: 3", ""]
    return "\n".join(lines)


def operator_pages() -> dict[str, str]:
    """``reference/operators/<category>.md`` -> Markdown, plus the index page."""
    CATEGORY = marble_scenarios.CATEGORY

    by_cat: dict[str, list[str]] = {c: [] for c in PAGES}
    for name in public_methods():
        by_cat.setdefault(CATEGORY.get(name, "more"), []).append(name)
    pages: dict[str, str] = {}
    index = ["# Operators", "",
             "Every public `Flowable` method, by topic. The marble diagrams are **recorded, not drawn**: "
             "`docs/_tools/marbles.py` runs each operator on the virtual-time `TestScheduler` with a "
             "`TestSubscriber` and draws what it recorded (a test fails when a committed diagram no longer "
             "matches its run).", "",
             "How to read a diagram: time runs left to right; the lanes above the box are the sources as the "
             "operator saw them, the lane below is what the subscriber received. A bar is `on_complete`, an X "
             "is `on_error`, ✂ is `cancel`; `request(n)` labels are the recorded demand.", "",
             "Adding an operator: its scenario goes in `docs/_tools/marble_scenarios.py` (or a reason why it "
             "has no diagram), then `python docs/_tools/marbles.py <name>` records and draws it; "
             "`tests/docs/test_marbles.py` fails until then.", ""]
    for cat, (title, intro) in PAGES.items():
        names = by_cat.get(cat, [])
        body = [f"# {title}", "", intro, ""]
        if not names:
            body += ["(None at the moment.)", ""]
        for n in names:
            body.append(_entry(n))
        pages[f"reference/operators/{cat}.md"] = "\n".join(body)
        if names:
            links = ", ".join(f"[`{n}`]({cat}.md#{n})" for n in names)
            index += [f"## [{title}]({cat}.md)", "", links, ""]
    pages["reference/operators/index.md"] = "\n".join(index)
    return pages


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, content in operator_pages().items():
        existing = files.get_file_from_path(path)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, path, content=content))
    return files


def perf_charts_markdown() -> str:
    """The Performance page's charts: per committed run, its machine and date, then its charts."""
    parts: list[str] = []
    for run in reversed(benchplot.runs()):  # newest file name first
        doc = benchplot.load(run)
        parts += [f"## `{run}`", "", f"Run: {benchplot.run_label(doc)}. Data: [perf/data/{run}.json](perf/data/{run}.json).", ""]
        for name in benchplot.charts(run):
            parts += [f"![{name[:-4]}](perf/{name}){{ .bench }}", ""]
    return "\n".join(parts) if parts else "(No benchmark run is committed under docs/perf/data yet.)"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri == "performance.md":
        return markdown.replace("<!-- perf:charts -->", perf_charts_markdown())
    return markdown
