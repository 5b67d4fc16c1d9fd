"""The import contracts: the core never imports Qt, its layers run one way, no cycles.

The core (app/, experiments/) stays usable headless: checked statically over every
module's imports (so a lazy import inside a function is caught too) and at run time
(importing every core module must not load Qt). Inside app/ the layers run one way
(LAYERS, lowest first) and no module imports itself back through others (cycles are
found as strongly connected components of the import graph, every import counted).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.app.import_graph import cycles, graph

REPO = Path(__file__).resolve().parents[3]
FORBIDDEN = {"PySide6", "shiboken6", "pyqtgraph", "qasync", "ui"}
CORE = ("app", "experiments")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def _core_files() -> list[Path]:
    return [p for pkg in CORE for p in sorted((REPO / pkg).rglob("*.py"))]


def test_core_sources_import_no_qt_and_no_ui() -> None:
    offenders = {
        str(p.relative_to(REPO)): sorted(_imports(p) & FORBIDDEN)
        for p in _core_files()
        if _imports(p) & FORBIDDEN
    }
    assert not offenders, f"core modules importing Qt or ui: {offenders}"


def test_experiments_imports_only_stdlib_and_numpy() -> None:
    allowed = set(sys.stdlib_module_names) | {"numpy", "experiments"}
    offenders = {
        str(p.relative_to(REPO)): sorted(_imports(p) - allowed)
        for p in sorted((REPO / "experiments").rglob("*.py"))
        if _imports(p) - allowed
    }
    assert not offenders, f"experiments/ may import only stdlib and numpy: {offenders}"


@pytest.mark.slow  # a Python start or more per case: make test runs it, make check does not
def test_importing_every_core_module_loads_no_qt() -> None:
    modules = [
        ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for p in _core_files()
        if p.name != "__main__.py"
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}:\n    importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6','shiboken6','pyqtgraph','qasync'))\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_contract_check_catches_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from PySide6 import QtCore\n")
    assert _imports(bad) & FORBIDDEN == {"PySide6"}


# Inside app/, lowest first. A module may import its own package and any lower layer;
# packages sharing a layer are independent of each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("app", "app.paths", "app.events", "app.terminal_text", "app.output_files"),  # the version, where files live, the event bus, terminal-safe text, files the admin names
    ("app.hosts",),  # SSH connections
    ("app.facts",),  # what a host is, parsed
    ("app.discovery",),  # facts gathered over a connection
    ("app.store",),  # SQLite: sessions, trials, samples, journal, recommendations
    ("app.knobs",),  # tunables: catalog, values, journal-first changes
    ("app.vocabulary",),  # how every face words knobs, values, workloads and figures
    ("app.runner",),  # workloads on the clients, ceilings
    ("app.recommend",),  # ranking and the recommendation with evidence
    ("app.sweep", "app.snippets"),  # the trial loop | config snippets
    ("app.report", "app.simulated"),  # the session read model and the HTML report | the demo's simulated hosts
    ("app.session",),  # the application layer both faces call
    ("app.commands", "app.desktop_entry"),  # the CLI's subcommands | the desktop entry installer
    ("app.cli",),  # the CLI's parser
    ("app.shell",),  # completion scripts and the man page, read from the parser
    ("app.__main__",),
)


def layer_of(module: str) -> tuple[int, str]:
    """(layer index, the package that places it) by the longest matching prefix."""
    best: tuple[int, str] | None = None
    for i, names in enumerate(LAYERS):
        for name in names:
            inside = module == name or (name != "app" and module.startswith(name + "."))  # "app" is the root only
            if inside and (best is None or len(name) > len(best[1])):
                best = (i, name)
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best


def layer_violations(g: dict[str, set[str]]) -> list[str]:
    out = []
    for module, targets in sorted(g.items()):
        if not module.startswith("app"):
            continue
        here, pkg = layer_of(module)
        for target in sorted(t for t in targets if t.startswith("app")):
            there, other = layer_of(target)
            if there > here or (there == here and other != pkg and pkg != "app" and other != "app"):
                out.append(f"{module} -> {target}")
    return out


def test_no_import_cycles_in_the_core() -> None:
    found = cycles(graph(CORE))
    assert not found, f"import cycles (every import counted, also inside functions): {found}"


def test_app_layers_run_one_way() -> None:
    assert not layer_violations(graph(CORE))


def test_the_graph_checks_catch_a_cycle_and_an_upward_import(tmp_path: Path) -> None:
    pkg = tmp_path / "app"
    (pkg / "store").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "store" / "__init__.py").write_text("from app.store.a import A\n")
    (pkg / "store" / "a.py").write_text("A = 1\ndef f():\n    from app.store import b\n")
    (pkg / "store" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                        "    from .a import A\nfrom app.report import x\n")
    (pkg / "report.py").write_text("x = 1\n")
    g = graph(["app"], root=tmp_path)
    assert cycles(g) == [["app.store.a", "app.store.b"]]
    assert layer_violations(g) == ["app.store.b -> app.report"]


# The wizard talks to the core through the application layer (app.session) and reads the
# core's own types and read model; it never drives hosts, the engine or the journal itself.
UI_MAY_IMPORT = (
    "app", "app.paths", "app.events", "app.cli", "app.desktop_entry",  # entry points, the event bus
    "app.output_files",  # files the admin names: their rules and failures
    "app.session",  # the application layer
    "app.report", "app.store", "app.vocabulary",  # the read model, records, how things read
    "app.knobs.catalog", "app.knobs.model", "app.facts.model", "app.snippets.model",  # the core's types
    "app.sweep.events", "app.sweep.spec",
    "experiments.samples",
)  # fmt: skip
# ui/ modules that import no Qt: view-model data the widgets draw from (ring buffers, the live
# data behind the plots, the review's timeline and list rows). Importing a Qt module counts as using Qt. A new one
# is a candidate for app/: list it here only if it is the UI's own.
QT_FREE_UI = {"ui", "ui.ring_buffer", "ui.live_data", "ui.pages", "ui.review.timeline",
              "ui.review.session_rows"}  # fmt: skip
QT = ("PySide6", "shiboken6", "pyqtgraph", "qasync")


def _allowed_for_ui(target: str) -> bool:
    return any(target == name or (name != "app" and target.startswith(name + ".")) for name in UI_MAY_IMPORT)


def test_ui_reaches_the_core_only_through_the_application_layer_and_its_types() -> None:
    g = graph((*CORE, "ui"))
    offenders = sorted(f"{m} -> {t}" for m, targets in g.items() if m.startswith("ui")
                       for t in targets if not t.startswith("ui") and not _allowed_for_ui(t))  # fmt: skip
    assert not offenders, offenders
    assert not cycles(g)


def test_the_qt_free_modules_in_ui_are_known() -> None:
    from tests.unit.app.import_graph import imported_names, modules

    mods = modules(["ui"])
    g = graph((*CORE, "ui"))
    direct = {m for m, p in mods.items() if any(source.split(".")[0] in QT for source, _ in imported_names(m, p))}
    qt: set[str] = set(direct)
    while grown := {m for m in mods if m not in qt and g[m] & qt}:  # importing a Qt module is using Qt
        qt |= grown
    qt_free = set(mods) - qt
    assert qt_free == QT_FREE_UI, "a Qt-free module in ui/ is core logic outside the contract: move it to app/"
