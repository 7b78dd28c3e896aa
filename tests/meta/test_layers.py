"""The layers of ``src/rstreams`` hold: no package imports a package of a later layer, and no two
packages import each other (a cycle), except for the edges listed in ``KNOWN_UPWARD`` (each with
its reason). A new upward edge, a new cycle or a new package without a layer fails here.

Edges are read from the source with ``ast``: ``import`` / ``from ... import`` statements anywhere
(also inside functions: a lazy import is still a dependency), the facade's string imports
(``lazy_function(".operators._map", ...)``, relative to ``rstreams.flowable``) and the ``_LAZY``
name -> module tables of the package ``__init__`` modules. Imports under ``if TYPE_CHECKING:`` are
left out: they never run. ``from rstreams import schedulers`` counts as an import of
``rstreams.schedulers``, ``from rstreams import Flowable`` as one of the ``rstreams`` facade.
The picture, one paragraph per layer, is in ``docs/architecture.md``.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "rstreams"

#: Layer of each top-level package or module of rstreams ("rstreams" is the package's own
#: ``__init__``, the facade). A package may import from its own layer's peers only when that makes
#: no cycle, and from earlier layers freely.
LAYERS: list[tuple[str, ...]] = [
    ("_spec",),  # the protocols and the rule table: imports nothing else from rstreams
    ("errors",),
    ("_internal",),  # the operator toolkit (with the asyncio loop helpers: _internal.event_loops)
    ("metrics", "debug"),  # public faces of _internal's metrics and introspection
    ("schedulers",),  # the Scheduler contract, the thread pools, the asyncio scheduler
    ("testing",),  # TestSubscriber, TestPublisher, TestScheduler: any Publisher, not only Flowable
    ("flowable",),  # Flowable: sources, operators, fusion, processors, asyncio bridge, retry policies
    # public faces of parts of the flowable layer (through flowable.lowlevel): the hooks (assembly
    # tracing patches Flowable), the retry policies, the processors, the asyncio bridge
    ("plugins", "retry", "processors", "aio"),
    ("rstreams",),  # the package facade: `from rstreams import Flowable, ...`
    ("tck",),  # the verification kit
    ("spark",),  # the extra `rstreams[spark]`
    ("demo_pipeline", "demo"),
    ("cli",),
]

#: Upward edges allowed (importer, imported), each with its reason. A cycle made only of these is
#: reported here too, not as a new violation. None today: what a lower layer needed of a higher one
#: (Flowable's asyncio methods, retry(policy), the multicast operators' processors) moved down into
#: the lower layer, and the higher package re-exports it.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}

#: Imports of another package's private module (``rstreams.spark._jvm`` from ``demo``): allowed
#: for these pairs only, each with its reason. Names a package lends to the packages above it have
#: a public home instead: ``rstreams.flowable.lowlevel``, the explicit re-exports of
#: ``rstreams.schedulers``, the modules of ``_internal``.
KNOWN_PRIVATE: dict[tuple[str, str], str] = {
    ("demo", "spark"): "the demo is a report of Spark's own state: its JVM, progress and session details",
    ("cli", "tck"): "`rstreams tck` is the kit's command line (tck._cli), mounted as a subcommand",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(target: str, current: str, is_package: bool) -> str:
    """``target`` ('.x', '..y.z' or absolute) as an absolute module name, seen from ``current``."""
    stripped = target.lstrip(".")
    level = len(target) - len(stripped)
    if level == 0:
        return target
    base = current.split(".")
    if not is_package:
        base.pop()
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([stripped] if stripped else []))


def _is_submodule(name: str) -> bool:
    rel = Path(*name.split(".")[1:])
    return (SRC / rel).with_suffix(".py").is_file() or (SRC / rel / "__init__.py").is_file()


def _is_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` or ``if typing.TYPE_CHECKING:`` (its body never runs); not
    ``if not TYPE_CHECKING:`` or any other test that merely mentions it."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def _imports(path: Path) -> Iterator[str]:
    """Every rstreams module ``path`` imports (absolute names)."""
    yield from _imports_of(path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py")


def _imports_of(text: str, current: str, is_package: bool) -> Iterator[str]:
    """Every rstreams module the source ``text`` of module ``current`` imports (absolute names)."""
    tree = ast.parse(text)
    skipped = _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve("." * node.level + (node.module or ""), current, is_package)
            if base == "rstreams":  # `from rstreams import schedulers` / `from .. import plugins`
                for alias in node.names:
                    sub = f"rstreams.{alias.name}"
                    yield sub if _is_submodule(sub) else base
            else:
                yield base
                for alias in node.names:  # `from .flowable import _assembly`: a module, maybe private
                    sub = f"{base}.{alias.name}"
                    if _is_submodule(sub):
                        yield sub
        elif (
            isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Name) and node.func.id == "lazy_function")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "lazy_function")
            )
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield _resolve(node.args[0].value, "rstreams.flowable", True)
        elif (
            isinstance(node, (ast.Assign, ast.AnnAssign))
            and any(
                isinstance(t, ast.Name) and t.id == "_LAZY"
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
            and isinstance(node.value, ast.Dict)
        ):
            for value in node.value.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    yield _resolve(value.value, current, is_package)


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "rstreams"


@functools.cache
def _edges() -> dict[tuple[str, str], set[str]]:
    """(importer package, imported package) -> the module-level edges behind it."""
    edges: dict[tuple[str, str], set[str]] = {}
    for path in SRC.rglob("*.py"):
        importer = _module_name(path)
        for target in _imports(path):
            if target != "rstreams" and not target.startswith("rstreams."):
                continue
            a, b = _top(importer), _top(target)
            if a != b:
                edges.setdefault((a, b), set()).add(f"{importer} -> {target}")
    return edges


def _rank() -> dict[str, int]:
    return {name: i for i, layer in enumerate(LAYERS) for name in layer}


def test_every_package_has_a_layer() -> None:
    rank = _rank()
    tops = {_top(_module_name(p)) for p in SRC.rglob("*.py")}
    missing = sorted(tops - set(rank))
    assert not missing, f"give these a layer in LAYERS (tests/meta/test_layers.py and docs/architecture.md): {missing}"


def test_spec_imports_nothing_else_from_rstreams() -> None:
    assert not [e for (a, _b), es in _edges().items() if a == "_spec" for e in es]


def test_no_new_upward_edge() -> None:
    rank = _rank()
    upward = {
        (a, b): sorted(es)
        for (a, b), es in _edges().items()
        if a in rank and b in rank and rank[b] > rank[a] and (a, b) not in KNOWN_UPWARD
    }
    assert not upward, f"imports of a later layer (see DESIGN.md's layers): {upward}"


def test_known_upward_edges_still_exist() -> None:
    # an allow-list entry whose edge is gone (or no longer upward) must go too, so the list stays the truth
    gone = sorted(set(KNOWN_UPWARD) - set(_edges()))
    assert not gone, f"remove these from KNOWN_UPWARD, the code no longer has them: {gone}"
    rank = _rank()
    level = sorted((a, b) for a, b in KNOWN_UPWARD if rank[b] <= rank[a])
    assert not level, f"remove these from KNOWN_UPWARD, they are not upward in LAYERS: {level}"


def test_no_new_cycle_between_packages() -> None:
    graph: dict[str, set[str]] = {}
    for a, b in _edges():
        if (a, b) not in KNOWN_UPWARD:
            graph.setdefault(a, set()).add(b)
    # depth-first search for a back edge
    state: dict[str, int] = {}
    path: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, f"import cycles between packages: {cycles}"


def test_no_new_import_of_another_packages_private_module() -> None:
    private: dict[tuple[str, str], list[str]] = {}
    for (a, b), es in _edges().items():
        for e in es:
            target = e.split(" -> ")[1]
            if any(part.startswith("_") for part in target.split(".")[2:]) and (a, b) not in KNOWN_PRIVATE:
                private.setdefault((a, b), []).append(e)
    assert not private, f"imports of another package's private module: {private}"
    gone = sorted(
        pair
        for pair in KNOWN_PRIVATE
        if not any(
            any(part.startswith("_") for part in e.split(" -> ")[1].split(".")[2:]) for e in _edges().get(pair, ())
        )
    )
    assert not gone, f"remove these from KNOWN_PRIVATE, the code no longer has them: {gone}"


def test_flowable_lowlevel_lends_only_names_a_higher_package_uses() -> None:
    # rstreams.flowable.lowlevel is the public home of what the flowable layer lends to the packages
    # above it; a name nobody above imports any more must leave it (and every name is loaded lazily)
    import rstreams.flowable.lowlevel as lowlevel

    assert sorted(lowlevel.__all__) == sorted(lowlevel._LAZY), "lowlevel.__all__ and its _LAZY table differ"
    used: set[str] = set()
    for path in SRC.rglob("*.py"):
        current = _module_name(path)
        if current.startswith("rstreams.flowable"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = _resolve("." * node.level + (node.module or ""), current, path.name == "__init__.py")
                if base == "rstreams.flowable.lowlevel":
                    used.update(alias.name for alias in node.names)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "lowlevel":
                used.add(node.attr)  # `from .flowable import lowlevel; lowlevel.set_tracing(...)`
    unused = sorted(set(lowlevel.__all__) - used)
    assert not unused, f"no package above flowable uses these names of flowable.lowlevel: {unused}"


def test_the_reader_sees_every_form_of_import() -> None:
    """What the layer checks read: what runs is an edge (also under ``if not TYPE_CHECKING``, in a
    function, a lazy_function string called as an attribute, an annotated ``_LAZY`` table); what
    never runs is not (``if TYPE_CHECKING:``, ``if typing.TYPE_CHECKING:``)."""
    source = """
import typing
from typing import TYPE_CHECKING
from . import _lazy
if TYPE_CHECKING:
    from rstreams import aio
if typing.TYPE_CHECKING:
    import rstreams.spark
if not TYPE_CHECKING:
    import rstreams.tck
def f():
    from ..processors import PublishProcessor
_i = _lazy.lazy_function(".operators._map_filter", "map_", "_i", globals())
_LAZY: dict[str, str] = {"Thing": "rstreams.retry"}
"""
    seen = set(_imports_of(source, "rstreams.flowable._x", False))
    assert {"rstreams.tck", "rstreams.processors", "rstreams.flowable.operators._map_filter", "rstreams.retry"} <= seen
    assert "rstreams.aio" not in seen and "rstreams.spark" not in seen
